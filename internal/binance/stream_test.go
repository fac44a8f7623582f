package binance

import (
	"errors"
	"testing"
)

// A character Binance would refuse is quoted as the character it is, at its
// position in characters, not as the first byte of its UTF-8 encoding.
func TestParseStreamSyntax(t *testing.T) {
	for name, why := range map[string]string{
		"btcusdt@tr ade":  `character ' ' at 10`,
		"btcusdt@tréde":   `character 'é' at 10`,
		"€usdt@trade":     `character '€' at 0`,
		"ethé€@tr ade":    `character 'é' at 3`,
		"btc\xffusdt@x":   `byte 0xff (not UTF-8) at 3`,
		"btc\uFFFDx@x":    `character '�' at 3`,
		"":                `empty name`,
		"btcusdt":         `want <symbol>@<type>`,
		"btcusdt@":        `want <symbol>@<type>`,
		"btc_usdt@trade":  `symbol must be letters and digits`,
		"!miniTicker@arr": "",
	} {
		_, err := ParseStream(name)
		var se *SyntaxError
		switch {
		case why == "" && err != nil:
			t.Errorf("ParseStream(%q): %v", name, err)
		case why != "" && (!errors.As(err, &se) || se.Why != why):
			t.Errorf("ParseStream(%q) = %v, want %s", name, err, why)
		}
	}
}
