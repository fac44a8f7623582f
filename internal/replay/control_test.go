package replay

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestParseRequest(t *testing.T) {
	tests := []struct {
		in     string
		method string
		id     string
		code   int // -1: no error
		params int
	}{
		{`{"method":"SUBSCRIBE","params":["btcusdt@trade"],"id":1}`, "SUBSCRIBE", "1", -1, 1},
		{" {\n\"id\" : \"x1\", \"method\":\"UNSUBSCRIBE\",\"params\":null}", "UNSUBSCRIBE", `"x1"`, -1, 0},
		{`{"method":"LIST_SUBSCRIPTIONS","id":-0}`, "LIST_SUBSCRIPTIONS", "0", -1, 0},
		{`{"method":"LIST_SUBSCRIPTIONS","id":007}`, "", "null", 3, 0},
		{`{"method":"SUBSCRIBE","params":"btcusdt@trade","id":1}`, "SUBSCRIBE", "1", 2, 1},
		{`{"method":"subscribe","params":[],"id":1}`, "subscribe", "1", 2, 0},
		{`{"method":1,"id":1}`, "1", "1", 2, 0},
		{`[1,2]`, "", "null", 2, 0},
		{`{"method":"SUBSCRIBE","id":1} x`, "", "null", 3, 0},
		{"{\"method\":\"SUBSCRIBE\",\"id\":\"\xff\"}", "", "null", 3, 0},
		{`{"method":"SUBSCRIBE","extra":{"a":[1,2]},"id":2}`, "SUBSCRIBE", "2", -1, 0},
	}
	for _, tt := range tests {
		req, err := parseRequest([]byte(tt.in))
		code := -1
		if err != nil {
			code = err.code
		}
		if code != tt.code || code != 3 && (req.method != tt.method || string(req.id) != tt.id || len(req.params) != tt.params) {
			t.Errorf("%q: method %q id %s params %d err %+v", tt.in, req.method, req.id, len(req.params), err)
		}
	}
}

func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		`{"method":"SUBSCRIBE","params":["btcusdt@trade"],"id":1}`,
		`{"method":"SET_PROPERTY","params":["combined",true],"id":"abc"}`,
		`{"method":"GET_PROPERTY","params":["combined"],"id":null}`,
		`{"method":"FOO","id":1}`, `{"params":[]}`, `{"method":`, `hello`, ``, `[]`, `{"id":1.5}`,
		"{\"method\":\"LIST_SUBSCRIPTIONS\",\n\"id\":9223372036854775807}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		req, perr := parseRequest(p)
		if !json.Valid(req.id) {
			t.Fatalf("id %q is not JSON", req.id)
		}
		if perr == nil {
			if !isMethod(req.method) {
				t.Fatalf("accepted method %q", req.method)
			}
			if !json.Valid(p) {
				t.Fatalf("accepted invalid JSON %q", p)
			}
			if out := appendResult(nil, []byte("null"), req.id); !json.Valid(out) {
				t.Fatalf("reply %s", out)
			}
			return
		}
		if perr.noID != (perr.code == 3) {
			t.Fatalf("code %d noID %v", perr.code, perr.noID)
		}
		if perr.code == 3 && json.Valid(p) && utf8.Valid(p) {
			t.Fatalf("valid JSON %q reported unparsable: %s", p, perr.msg)
		}
		if out := appendError(nil, perr, req.id); !json.Valid(out) {
			t.Fatalf("error reply %q is not JSON", out)
		}
	})
}
