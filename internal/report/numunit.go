package report

import "strings"

// numUnits names the unit of Row.Nums (stored as summary.num) per metric,
// matched by the start of the metric's name.
var numUnits = []struct{ prefix, unit string }{
	{"Messages / data", "messages"},   // messages received, drain included
	{"Avg / peak msgs/s", "msgs/s"},   // the average over the window's seconds
	{"RSS start", "bytes"},            // RSS at the window's last second
	{"CPU avg", "%"},                  // % of one core, mean over the window
	{"CPU s sampled", "s"},            // CPU seconds from /proc, summed over the worker's processes
	{"Faults seen", "faults"},         // fault events recorded for the library
	{"Reconnect duration", "ms"},      // the longest reconnect
	{"Reconnects", "reconnects"},      // over all connection groups
	{"Max seconds without data", "s"}, // the worst subscription
	{"Lost / duplicate", "ids"},       // lost sequence ids, over all subscriptions
	{"Lost charged", "ids"},           // lost ids that another library received
	{"Latency p50 / p99", "ms"},       // whole-run p99
	{"Errors / stalls", "count"},      // errors + stalls
	{"Seconds missing", "s"},          // seconds of the window without a worker row
	{"Dials / failed", "dials"},       // failed dials
	{"Unrepairable slots", "slots"},   // slots the unrepairable rule fired for
	{"Stalled subscriptions at end", "subscriptions"},
}

// NumUnit returns the unit of the number behind a summary metric, or "" when
// the metric is not known here.
func NumUnit(metric string) string {
	for _, u := range numUnits {
		if strings.HasPrefix(metric, u.prefix) {
			return u.unit
		}
	}
	return ""
}
