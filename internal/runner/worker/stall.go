package worker

import (
	"time"

	"github.com/wssoak/wssoak/internal/binance"
	"github.com/wssoak/wssoak/internal/wire"
)

// stallAfter is the silence after which a subscription of the given stream counts as stalled.
// A stream Binance serves silently (retired or unknown) has no cadence to
// wait for: it stalls after StallMin, so the run reports it early.
func stallAfter(p *wire.Plan, st binance.Stream) time.Duration {
	if silentByDesign(st) {
		return p.StallMin
	}
	if st.Period > 0 {
		return max(time.Duration(float64(st.Period)*p.StallFactor), p.StallMin)
	}
	return p.StallRealTime
}

// silentByDesign: Binance accepts a subscription to a retired or unknown
// stream and never sends anything on it.
func silentByDesign(st binance.Stream) bool { return st.Retired || st.Kind == binance.KindUnknown }
