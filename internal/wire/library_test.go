package wire_test

import (
	"slices"
	"testing"

	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/wire"
)

// TestLibraries: the library names are those of the transports, in their order.
func TestLibraries(t *testing.T) {
	if got := transport.Names(); !slices.Equal(got, wire.Libraries) {
		t.Errorf("transport.Names() = %q, wire.Libraries = %q", got, wire.Libraries)
	}
}
