package transport

import (
	"fmt"
	"strings"
)

// All returns one Transport per library, in a fixed order.
func All() []Transport {
	return []Transport{Gorilla{}, Gobwas{}, Coder{}, Gws{}, Fasthttp{}, Nbio{}}
}

// Names returns the library names in the order of All.
func Names() []string {
	all := All()
	names := make([]string, len(all))
	for i, t := range all {
		names[i] = t.Name()
	}
	return names
}

// Lookup returns the Transport called name.
func Lookup(name string) (Transport, error) {
	for _, t := range All() {
		if t.Name() == name {
			return t, nil
		}
	}
	return nil, fmt.Errorf("unknown library %q (known: %s)", name, strings.Join(Names(), ", "))
}
