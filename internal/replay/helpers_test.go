package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startServer starts a server on a loopback port and closes it at the end of the test.
func startServer(t testing.TB, cfg Config) *Server {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

var testDialer = websocket.Dialer{HandshakeTimeout: 5 * time.Second}

// client is a test client whose reader goroutine feeds a channel, so reads can
// time out without breaking the connection.
type client struct {
	*websocket.Conn
	msgs chan []byte
	end  chan error // the read error that ended the connection
}

// dial opens a client connection tagged tag; it is closed at the end of the test.
// setup runs before the reader starts (to install ping/pong handlers).
func dial(t testing.TB, s *Server, path, tag string, setup ...func(*websocket.Conn)) *client {
	t.Helper()
	c, resp, err := dialResp(s, path, tag, nil)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial %s: %v (status %d)", path, err, status)
	}
	return startClient(t, c, setup...)
}

func startClient(t testing.TB, c *websocket.Conn, setup ...func(*websocket.Conn)) *client {
	for _, f := range setup {
		f(c)
	}
	cl := &client{Conn: c, msgs: make(chan []byte, 1<<16), end: make(chan error, 1)}
	done, stop := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			_, p, err := c.ReadMessage()
			if err != nil {
				cl.end <- err
				return
			}
			select {
			case cl.msgs <- p:
			case <-stop: // nobody reads any more
				return
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		c.Close()
		<-done
	})
	return cl
}

func dialResp(s *Server, path, tag string, d *websocket.Dialer) (*websocket.Conn, *http.Response, error) {
	if d == nil {
		d = &testDialer
	}
	h := http.Header{}
	if tag != "" {
		h.Set("X-Soak-Conn", tag)
	}
	c, resp, err := d.Dial(s.URL()+path, h)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	return c, resp, err
}

// readFor collects messages for d; err is the error that ended the connection, if it did.
func readFor(c *client, d time.Duration) ([][]byte, error) {
	var out [][]byte
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case p := <-c.msgs:
			out = append(out, p)
		case err := <-c.end:
			for len(c.msgs) > 0 {
				out = append(out, <-c.msgs)
			}
			c.end <- err // keep it for later callers
			return out, err
		case <-timer.C:
			return out, nil
		}
	}
}

// next returns the next message within d.
func next(t testing.TB, c *client, d time.Duration) []byte {
	t.Helper()
	select {
	case p := <-c.msgs:
		return p
	case err := <-c.end:
		c.end <- err
		t.Fatalf("connection ended: %v", err)
	case <-time.After(d):
		t.Fatalf("no message within %v", d)
	}
	return nil
}

// ask sends a control message and returns the next text message.
func ask(t testing.TB, c *client, msg string) string {
	t.Helper()
	if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		t.Fatalf("write %s: %v", msg, err)
	}
	return string(next(t, c, 3*time.Second))
}

// askReply is ask on a connection that also receives events: it skips them.
func askReply(t testing.TB, c *client, msg string) string {
	t.Helper()
	if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		t.Fatalf("write %s: %v", msg, err)
	}
	for {
		p := string(next(t, c, 3*time.Second))
		if strings.HasPrefix(p, `{"result"`) || strings.HasPrefix(p, `{"error"`) {
			return p
		}
	}
}

// closeCode waits until the connection ends and returns the close code received (1006 if none).
func closeCode(t testing.TB, c *client, within time.Duration) (int, string) {
	t.Helper()
	select {
	case err := <-c.end:
		c.end <- err
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code, ce.Text
		}
		return 1006, err.Error()
	case <-time.After(within):
		t.Fatalf("no close within %v", within)
	}
	return 0, ""
}

// field returns the integer field key of a JSON object (exact key match).
func field(t testing.TB, p []byte, key string) int64 {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(p, &m); err != nil {
		t.Fatalf("%v: %s", err, p)
	}
	v, err := strconv.ParseInt(string(m[key]), 10, 64)
	if err != nil {
		t.Fatalf("field %s of %s: %v", key, p, err)
	}
	return v
}

// keys returns the keys of a JSON object in document order.
func keys(t testing.TB, p []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(p))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", p)
	}
	var out []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// unwrap splits a combined message into stream name and payload.
func unwrap(t testing.TB, p []byte) (string, []byte) {
	t.Helper()
	var w struct {
		Stream string          `json:"stream"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(p, &w); err != nil || w.Stream == "" {
		t.Fatalf("not a combined message: %s", p)
	}
	if k := keys(t, p); len(k) != 2 || k[0] != "stream" || k[1] != "data" {
		t.Fatalf("combined keys %v", k)
	}
	return w.Stream, w.Data
}

func ctxTimeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
