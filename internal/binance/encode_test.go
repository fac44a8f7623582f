package binance

import (
	"encoding/json"
	"testing"
)

func TestAppend(t *testing.T) {
	for _, tc := range []struct {
		v    int64
		want string
	}{
		{6000013000000, `"60000.13000000"`}, {1, `"0.00000001"`}, {0, `"0.00000000"`}, {-150000000, `"-1.50000000"`},
	} {
		if got := string(AppendDec(nil, tc.v)); got != tc.want {
			t.Errorf("AppendDec(%d) = %s, want %s", tc.v, got, tc.want)
		}
	}
	b := append([]byte(`{"e":"depthUpdate"`), nil...)
	b = AppendIntField(b, "u", 42)
	b = AppendStrField(b, "s", "BTCUSDT")
	b = AppendDecField(b, "p", 12345)
	b = AppendBoolField(b, "m", true)
	b = AppendLevels(AppendKey(b, "b"), []Level{{P: 6000000000000, Q: 100000000}, {P: 5999900000000, Q: 1}})
	b = append(b, '}')
	want := `{"e":"depthUpdate","u":42,"s":"BTCUSDT","p":"0.00012345","m":true,"b":[["60000.00000000","1.00000000"],["59999.00000000","0.00000001"]]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if !json.Valid(b) {
		t.Error("not valid JSON")
	}
}
