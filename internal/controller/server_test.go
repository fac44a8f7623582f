package controller

import (
	"testing"

	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/replay"
	"github.com/wssoak/wssoak/internal/transport/proxytest"
)

// TestControllerRESTThroughProxy: the controller's own REST requests to a remote base (the
// symbol list) take the profile's proxy, like the workers' connections.
func TestControllerRESTThroughProxy(t *testing.T) {
	srv, err := replay.New(replay.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	px, err := proxytest.Start("http", "soak", "p@ss", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	c := &controller{o: Options{Profile: &profile.Profile{Proxy: px.URL()}}}
	client, err := c.httpClient(true)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Get("http://" + srv.Addr() + "/api/v3/ticker/24hr")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || px.Stats().Tunnels[srv.Addr()] != 1 {
		t.Fatalf("status %d, tunnels %v: want 200 through one tunnel", resp.StatusCode, px.Stats().Tunnels)
	}
	client.CloseIdleConnections()
}
