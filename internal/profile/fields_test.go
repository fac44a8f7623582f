package profile

import (
	"reflect"
	"testing"

	"github.com/wssoak/wssoak/internal/wire"
)

// TestFieldsDeclared: every settings struct's tags make a decoder (a field
// without a yaml tag, an unknown option or kind panics), each key once.
func TestFieldsDeclared(t *testing.T) {
	for _, v := range []any{&Profile{}, &Keepalive{}, &Reconnect{}, &Silence{}, &wire.Replay{}, &TLS{}, &Report{}, &Runtime{},
		&Group{}, &Fault{}, &Top{}, &Variant{}} {
		typ := reflect.TypeOf(v).Elem()
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: %v", typ, r)
				}
			}()
			d := &decoder{lines: map[string]int{}, set: map[string]bool{}}
			fs := d.fields(reflect.ValueOf(v), "")
			seen := map[string]bool{}
			for _, f := range fs {
				if seen[f.key] || f.key == "" || f.decode == nil {
					t.Errorf("%s: key %q declared twice, empty or without a decoder", typ, f.key)
				}
				seen[f.key] = true
			}
			if len(fs) == 0 {
				t.Errorf("%s: no keys", typ)
			}
		}()
	}
	for _, s := range specsOf(reflect.TypeOf(Top{})) {
		if s.key == "top" && s.max != MaxPerConnection {
			t.Errorf("top: at most %d, want MaxPerConnection (%d)", s.max, MaxPerConnection)
		}
	}
	if s := specsOf(reflect.TypeOf(wire.Replay{})); len(s) != 11 || s[0].key != "seed" || s[8].key != "tls" || s[10].key != "deflate_level" {
		t.Errorf("wire.Replay keys %+v: want the eleven of the profile's replay section, seed to tls, deflate_window_bits, deflate_level", s)
	}
}
