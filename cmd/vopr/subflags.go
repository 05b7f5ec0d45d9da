package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// splitFlags parses a subcommand's own flags, those fs defines, out of
// args, and returns the rest (the run flags, in their order) for
// parseArgs. An own flag may come anywhere among the run flags, as
// -name value, -name=value or, for a boolean, -name alone. Errors are the
// flag package's, naming the flag and the rule; -h is flag.ErrHelp.
func splitFlags(fs *flag.FlagSet, args []string) (rest []string, err error) {
	var own []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			rest = append(rest, arg)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		f := fs.Lookup(name)
		if name == "h" || name == "help" {
			return nil, flag.ErrHelp
		}
		if f == nil {
			rest = append(rest, arg)
			continue
		}
		own = append(own, arg)
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); hasValue || ok && b.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			i++
			own = append(own, args[i])
		}
	}
	fs.SetOutput(io.Discard) // the caller reports the error, with its usage
	if err := fs.Parse(own); err != nil {
		return nil, err
	}
	return rest, nil
}

// parseOneRun parses the run flags of subcommand sub, which takes one run
// (shrink, branch, timeline): a campaign or -performance is refused, and
// the run needs its seed (-seed N, or -plan FILE, which holds one).
func parseOneRun(sub string, args []string, stderr io.Writer) (*config, error) {
	cfg, _, err := parseArgs(args, stderr)
	switch {
	case err != nil:
		return nil, err
	case cfg.campaign() || cfg.performance:
		return nil, fmt.Errorf("%s takes one run: no -seeds, -duration or -performance", sub)
	case !cfg.seed.set:
		return nil, errors.New("give the run's -seed N (or -plan FILE)")
	}
	return cfg, nil
}
