package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// deprecated is an old spelling kept for one release: it sets what its new spelling
// sets, and its first use prints one line on stderr naming the new spelling.
type deprecated struct {
	cmd, name, now string // the subcommand, the old flag's name, the new spelling
	set            func(string) error
	w              io.Writer
	warned         bool
}

func (d *deprecated) String() string { return "" }

func (d *deprecated) Set(s string) error {
	if !d.warned {
		d.warned = true
		fmt.Fprintf(d.w, "soak %s: flag -%s is deprecated and goes away in the next release: use %s\n", d.cmd, d.name, d.now)
	}
	return d.set(s)
}

// deprecate declares flag -old, an old spelling that calls set and warns once.
func (fs *flagSet) deprecate(old, now string, set func(string) error) {
	fs.Var(&deprecated{cmd: fs.name, name: old, now: now, set: set, w: fs.stderr}, old, "deprecated: use "+now)
}

// renamed declares -old as the deprecated spelling of flag -now.
func (fs *flagSet) renamed(old, now string) {
	f := fs.Lookup(now)
	if f == nil {
		panic("soak: renamed flag -" + old + ": no flag -" + now)
	}
	arg, _ := flag.UnquoteUsage(f)
	fs.deprecate(old, strings.TrimSpace("-"+now+" "+arg), f.Value.Set)
}
