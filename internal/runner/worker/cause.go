package worker

import (
	"compress/flate"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/wssoak/wssoak/internal/transport"
)

// Close causes: why a connection ended or a dial failed. Each disconnected
// and dial_error event's detail starts with one, then ": " and the specifics.
const (
	causeServerClose = "server_close" // the server sent a close frame; the code is its code
	causeAbnormal    = "abnormal"     // the TCP connection ended without a close frame (EOF, reset): 1006
	causeReadLimit   = "read_limit"   // a message above the read limit: 1009
	causePongTimeout = "pong_timeout" // no pong within the keepalive timeout: soak aborted the connection
	causeStallAbort  = "stall_abort"  // every subscription silent past its threshold: soak aborted the connection
	causeDialError   = "dial_error"   // the TCP connect (or DNS, or the dial timeout) failed
	causeHandshake   = "handshake"    // the server answered the upgrade with a status other than 101; the code is it
	causeBadAccept   = "bad_accept"   // the server answered 101 but the library refused the upgrade (Sec-WebSocket-Accept); code 101
	causeTLS         = "tls_error"    // the TLS handshake failed (certificate, protocol)
	causeLocal       = "local_close"  // closed by soak at the end of the run
	causeBadDeflate  = "bad_deflate"  // a compressed message did not inflate (permessage-deflate): 1007
)

// classify turns the error that ended a read loop (dialed true: the
// connection was established) or a dial into a close code and a cause. why is
// set when soak aborted the connection itself (pong timeout, stall abort).
func classify(err error, dialed bool, why *abortReason) (code int, cause, detail string) {
	if why != nil {
		return 1006, why.cause, why.detail
	}
	var (
		ce   *transport.CloseError
		he   *transport.HandshakeError
		rhe  tls.RecordHeaderError
		ae   tls.AlertError
		cve  *tls.CertificateVerificationError
		uae  x509.UnknownAuthorityError
		hne  x509.HostnameError
		cie  x509.CertificateInvalidError
		fce  flate.CorruptInputError
		text = ""
	)
	if err != nil {
		text = err.Error()
	}
	switch {
	case err == nil:
		return 1000, causeLocal, "closed"
	case errors.As(err, &he) && he.Status == 101:
		// gorilla and fasthttp return the 101 they refused as a bad handshake.
		return 101, causeBadAccept, badUpgrade(he.Header)
	case errors.As(err, &he):
		return he.Status, causeHandshake, fmt.Sprintf("status %d", he.Status)
	case !dialed && strings.Contains(strings.ToLower(text), "sec-websocket-accept"):
		// gobwas, coder and gws check the key themselves and say so in their error.
		return 101, causeBadAccept, "101 with a wrong Sec-WebSocket-Accept: " + text
	case errors.As(err, &ce) && ce.Code == 1006:
		return 1006, causeAbnormal, "no close frame"
	case errors.As(err, &ce):
		return ce.Code, causeServerClose, strings.TrimSpace(fmt.Sprintf("%d %s", ce.Code, ce.Reason))
	case errors.Is(err, transport.ErrReadLimit):
		return 1009, causeReadLimit, text
	case errors.As(err, &fce):
		return 1007, causeBadDeflate, text
	case errors.As(err, &rhe), errors.As(err, &ae), errors.As(err, &cve), errors.As(err, &uae),
		errors.As(err, &hne), errors.As(err, &cie), strings.Contains(text, "tls: "):
		return 1015, causeTLS, text
	case !dialed:
		return 0, causeDialError, text
	case errors.Is(err, net.ErrClosed):
		return 1000, causeLocal, "closed by soak"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return 1006, causeAbnormal, "eof"
	}
	return 1006, causeAbnormal, text
}

// badUpgrade says what is wrong with a 101 answer the library refused, from
// its headers: the Upgrade and Connection tokens, else the accept key (which
// the library computed from its own Sec-WebSocket-Key).
func badUpgrade(h http.Header) string {
	has := func(name, token string) bool {
		for _, v := range h.Values(name) {
			for _, t := range strings.Split(v, ",") {
				if strings.EqualFold(strings.TrimSpace(t), token) {
					return true
				}
			}
		}
		return false
	}
	switch {
	case !has("Upgrade", "websocket"):
		return "101 without Upgrade: websocket"
	case !has("Connection", "upgrade"):
		return "101 without Connection: upgrade"
	case h.Get("Sec-WebSocket-Accept") == "":
		return "101 without Sec-WebSocket-Accept"
	}
	return fmt.Sprintf("101 with a wrong Sec-WebSocket-Accept %q", h.Get("Sec-WebSocket-Accept"))
}

// failKey is how a failed dial is counted in its slot's account (wire.SlotStat.
// Statuses, the table's "failed (status × n)"): a refused handshake by its
// HTTP status, a 101 whose upgrade the library refused as "accept"; other
// failures (TCP, TLS) are only counted as failed.
func failKey(code int, cause string) string {
	switch cause {
	case causeHandshake:
		return strconv.Itoa(code)
	case causeBadAccept:
		return "accept"
	}
	return ""
}

// abortReason is why soak aborted a connection itself.
type abortReason struct{ cause, detail string }
