package profile

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/wssoak/wssoak/internal/binance"
	"github.com/wssoak/wssoak/internal/spelling"
)

// SymbolPlaceholder in a stream template is replaced by each symbol.
const SymbolPlaceholder = "{symbol}"

// ExpandedGroup is a group with its concrete streams.
type ExpandedGroup struct {
	Name          string
	Subscribe     string
	PerConnection int
	Streams       []binance.Stream
}

// Expand returns, per group, the concrete streams in order: each template
// crossed with the group's symbols (template-major), duplicates dropped.
func (p *Profile) Expand() ([]ExpandedGroup, error) {
	if p.NeedsResolve() {
		return nil, errors.New("expand: symbols given as top N are not resolved yet")
	}
	out := make([]ExpandedGroup, 0, len(p.Groups))
	for _, g := range p.Groups {
		syms := g.Symbols
		if syms == nil {
			syms = p.Symbols
		}
		eg := ExpandedGroup{Name: g.Name, Subscribe: g.Subscribe, PerConnection: g.PerConnection}
		seen := map[string]bool{}
		for _, t := range g.Streams {
			names := []string{t}
			if strings.Contains(t, SymbolPlaceholder) {
				names = names[:0]
				for _, s := range syms {
					names = append(names, strings.ReplaceAll(t, SymbolPlaceholder, s))
				}
			}
			for _, n := range names {
				if seen[n] {
					continue
				}
				seen[n] = true
				st, _, err := parseStream(n, t)
				if err != nil {
					return nil, fmt.Errorf("expand group %q: %w", g.Name, err)
				}
				eg.Streams = append(eg.Streams, st)
			}
		}
		out = append(out, eg)
	}
	return out, nil
}

// checkTemplate validates a stream template by expanding it with one
// symbol: an error, or a warning (a stream Binance never serves), unknown
// when that stream's kind is none Binance has.
func checkTemplate(t, symbol string) (warning string, unknown bool, err error) {
	name := strings.ReplaceAll(t, SymbolPlaceholder, symbol)
	if strings.ContainsAny(name, "{}") {
		return "", false, fmt.Errorf("unknown placeholder in stream template %q: the only one is %s", t, SymbolPlaceholder)
	}
	st, warning, err := parseStream(name, t)
	return warning, err == nil && st.Kind == binance.KindUnknown && !st.Retired, err
}

// streamKinds are the names of the stream kinds binance knows.
var streamKinds = func() []string {
	var out []string
	for k := binance.Kind(0); !strings.HasPrefix(k.String(), "kind("); k++ {
		if k != binance.KindUnknown {
			out = append(out, k.String())
		}
	}
	return out
}()

// streamSuggestion is `; did you mean "x"?` for a template whose kind is
// misspelt ({symbol}@aggtrade: {symbol}@aggTrade), else "".
func streamSuggestion(t string) string {
	prefix, kind, ok := strings.Cut(t, "@")
	if !ok {
		return ""
	}
	kind, rest, _ := strings.Cut(kind, "@")
	near := spelling.Nearest(kind, streamKinds)
	if near == "" || near == kind {
		return ""
	}
	if rest != "" {
		near += "@" + rest
	}
	return fmt.Sprintf("; did you mean %q?", prefix+"@"+near)
}

// parseStream parses one concrete name. A name Binance accepts but never
// serves (retired, or unknown) is allowed with a warning: the run subscribes to
// it and reports it as a stalled subscription, which is what a client that
// asked for it would meet on the live exchange.
func parseStream(name, template string) (binance.Stream, string, error) {
	from := ""
	if name != template {
		from = fmt.Sprintf(" (from %q)", template)
	}
	st, err := binance.ParseStream(name)
	if se := (*binance.SyntaxError)(nil); errors.As(err, &se) {
		return st, "", fmt.Errorf("invalid stream %q%s: %s", name, from, se.Why)
	} else if err != nil {
		return st, "", fmt.Errorf("invalid stream %q%s: %w", name, from, err)
	}
	switch {
	case st.Retired:
		return st, fmt.Sprintf("stream %q%s was retired by Binance and sends nothing: it will be reported as stalled", name, from), nil
	case st.Kind == binance.KindUnknown:
		return st, fmt.Sprintf("unknown stream %q%s: Binance accepts it and sends nothing: it will be reported as stalled", name, from), nil
	}
	return st, "", nil
}

func checkSymbol(s string) error {
	if s == "" {
		return errors.New("empty")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			return errors.New("symbols must be lowercase")
		case !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9'):
			return errors.New("want letters and digits only")
		}
	}
	return nil
}

func checkTarget(s string) error {
	if s == TargetLocal {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		return fmt.Errorf("want %q or a ws:// or wss:// URL such as wss://stream.binance.com:9443", TargetLocal)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return errors.New("want a base URL without query, fragment or credentials")
	}
	if u.Hostname() == "" {
		return errors.New("no host: want a URL such as wss://stream.binance.com:9443")
	}
	if strings.HasSuffix(u.Host, ":") {
		return errors.New("empty port: want host:port with a port from 1 to 65535, or no port")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("bad port %q: want 1 to 65535", p)
		}
	}
	return nil
}
