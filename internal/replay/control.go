package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// request is a parsed live control message.
type request struct {
	method string
	params []json.RawMessage // nil when absent or null
	id     []byte            // the id as echoed in replies; "null" when invalid or missing
}

// ctlError is a reply error: code and message text as Binance sends them.
type ctlError struct {
	code int
	msg  string
	noID bool // unparsable input: the reply carries no id
}

const (
	msgInvalidID     = "Invalid request: request ID must be an unsigned integer"
	msgInvalidStream = "Invalid request: invalid stream"
	msgTooMany       = "Invalid request: too many parameters"
	msgPropName      = "Invalid request: property name must be a string"
	msgUnknownProp   = "Unknown property"
	msgExpectBool    = "Invalid value type: expected Boolean"
)

var methods = []string{"SUBSCRIBE", "UNSUBSCRIBE", "LIST_SUBSCRIPTIONS", "SET_PROPERTY", "GET_PROPERTY"}

// parseRequest parses one control message. Fields are checked in the order
// they appear, as a streaming deserializer would; the first problem wins.
func parseRequest(p []byte) (request, *ctlError) {
	req := request{id: []byte("null")}
	if err := syntaxError(p); err != nil {
		return req, err
	}
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return req, &ctlError{code: 2, msg: "Invalid request: expected a JSON object"}
	}
	var first *ctlError
	fail := func(e *ctlError) {
		if first == nil {
			first = e
		}
	}
	hasMethod, hasID := false, false
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return req, &ctlError{code: 3, msg: "Invalid JSON: " + err.Error(), noID: true}
		}
		key, _ := kt.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return req, &ctlError{code: 3, msg: "Invalid JSON: " + err.Error(), noID: true}
		}
		switch key {
		case "method":
			hasMethod = true
			var m string
			if json.Unmarshal(raw, &m) != nil || !isMethod(m) {
				if m == "" {
					m = string(raw)
				}
				line, col := lineCol(p, dec.InputOffset())
				fail(&ctlError{code: 2, msg: fmt.Sprintf("Invalid request: unknown variant `%s`, expected one of `SUBSCRIBE`, `UNSUBSCRIBE`, `LIST_SUBSCRIPTIONS`, `SET_PROPERTY`, `GET_PROPERTY` at line %d column %d", m, line, col)})
			}
			req.method = m
		case "params":
			if string(raw) == "null" {
				req.params = nil
				break
			}
			req.params = nil
			if json.Unmarshal(raw, &req.params) != nil {
				req.params = []json.RawMessage{raw}
				fail(paramsError(req.method))
			}
		case "id":
			hasID = true
			if id, ok := parseID(raw); ok {
				req.id = id
			} else {
				req.id = []byte("null")
				fail(&ctlError{code: 2, msg: msgInvalidID})
			}
		}
	}
	if !hasMethod {
		line, col := lineCol(p, dec.InputOffset()+1)
		fail(&ctlError{code: 2, msg: fmt.Sprintf("Invalid request: missing field `method` at line %d column %d", line, col)})
	}
	if !hasID {
		fail(&ctlError{code: 2, msg: msgInvalidID})
	}
	return req, first
}

// paramsError is the error for a params value that is not an array.
func paramsError(method string) *ctlError {
	switch method {
	case "SET_PROPERTY", "GET_PROPERTY":
		return &ctlError{code: 2, msg: msgPropName}
	case "LIST_SUBSCRIPTIONS":
		return &ctlError{code: 2, msg: msgTooMany}
	}
	return &ctlError{code: 2, msg: msgInvalidStream}
}

func isMethod(m string) bool {
	for _, x := range methods {
		if m == x {
			return true
		}
	}
	return false
}

// parseID accepts a signed 64-bit integer, an alphanumeric string of at most
// 36 characters, or null, and returns it as it will be echoed.
func parseID(raw []byte) ([]byte, bool) {
	switch {
	case string(raw) == "null":
		return raw, true
	case len(raw) > 0 && raw[0] == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil || len(s) > 36 {
			return nil, false
		}
		for i := 0; i < len(s); i++ {
			c := s[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				return nil, false
			}
		}
		return append([]byte(nil), raw...), true
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return nil, false
	}
	return strconv.AppendInt(nil, n, 10), true
}

// syntaxError reports unparsable input as the code-3 error.
func syntaxError(p []byte) *ctlError {
	if len(bytes.TrimSpace(p)) == 0 {
		return &ctlError{code: 3, msg: "Invalid JSON: EOF while parsing a value", noID: true}
	}
	if !utf8.Valid(p) {
		return &ctlError{code: 3, msg: "Invalid JSON: invalid unicode code point", noID: true}
	}
	var v any
	err := json.Unmarshal(p, &v)
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off := se.Offset
		line, col := lineCol(p, off)
		if errors.Is(err, io.ErrUnexpectedEOF) || int(off) >= len(bytes.TrimRight(p, " \t\r\n")) {
			return &ctlError{code: 3, msg: fmt.Sprintf("Invalid JSON: EOF while parsing a value at line %d column %d", line, col), noID: true}
		}
		return &ctlError{code: 3, msg: fmt.Sprintf("Invalid JSON: expected value at line %d column %d", line, col), noID: true}
	}
	return &ctlError{code: 3, msg: "Invalid JSON: EOF while parsing a value", noID: true}
}

// lineCol converts a byte offset (just past the offending byte) to a 1-based
// line and the column of that byte, as Binance error texts report positions.
func lineCol(p []byte, off int64) (int, int) {
	if off > int64(len(p)) {
		off = int64(len(p))
	}
	line, col := 1, 0
	for _, c := range p[:off] {
		if c == '\n' {
			line, col = line+1, 0
			continue
		}
		col++
	}
	return line, col
}

// appendResult appends {"result":<result>,"id":<id>}.
func appendResult(dst, result, id []byte) []byte {
	dst = append(dst, `{"result":`...)
	dst = append(dst, result...)
	dst = append(dst, `,"id":`...)
	dst = append(dst, id...)
	return append(dst, '}')
}

// appendError appends {"error":{"code":N,"msg":"…"},"id":<id>} (no id for unparsable input).
func appendError(dst []byte, e *ctlError, id []byte) []byte {
	dst = append(dst, `{"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.code), 10)
	dst = append(dst, `,"msg":`...)
	dst = appendJSONString(dst, e.msg)
	dst = append(dst, '}')
	if !e.noID {
		dst = append(dst, `,"id":`...)
		dst = append(dst, id...)
	}
	return append(dst, '}')
}

func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r < 0x20:
			dst = fmt.Appendf(dst, `\u%04x`, r)
		case r == utf8.RuneError:
			dst = append(dst, `\ufffd`...)
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return append(dst, '"')
}

// stringParams returns params as strings; ok is false if any is not a string.
func stringParams(params []json.RawMessage) ([]string, bool) {
	out := make([]string, 0, len(params))
	for _, raw := range params {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}
