// Package deploy holds no code: its test checks the files beside it, the
// Prometheus configuration and alert rules (prometheus/, with promtool) and
// the systemd unit (systemd/, with systemd-analyze), where those tools are
// installed. The Grafana dashboard (grafana/) is checked by
// internal/dashboard, which generates it.
package deploy
