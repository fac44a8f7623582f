package runner

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
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
	causeTLS         = "tls_error"    // the TLS handshake failed (certificate, protocol)
	causeLocal       = "local_close"  // closed by soak at the end of the run
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
		text = ""
	)
	if err != nil {
		text = err.Error()
	}
	switch {
	case err == nil:
		return 1000, causeLocal, "closed"
	case errors.As(err, &he):
		return he.Status, causeHandshake, fmt.Sprintf("status %d", he.Status)
	case errors.As(err, &ce) && ce.Code == 1006:
		return 1006, causeAbnormal, "no close frame"
	case errors.As(err, &ce):
		return ce.Code, causeServerClose, strings.TrimSpace(fmt.Sprintf("%d %s", ce.Code, ce.Reason))
	case errors.Is(err, transport.ErrReadLimit):
		return 1009, causeReadLimit, text
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

// abortReason is why soak aborted a connection itself.
type abortReason struct{ cause, detail string }
