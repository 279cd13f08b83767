package cli

import (
	"fmt"
	flag "github.com/spf13/pflag"
	"sort"
	"strings"
)

// backendOpts is a repeatable --backend-opt KEY=VALUE flag: the
// backend-specific settings of backend.Options (for onnxruntime, lib=PATH
// of the ONNX Runtime library).
type backendOpts map[string]string

func (o backendOpts) String() string {
	var kv []string
	for k, v := range o {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(kv, ",")
}

// Type names the value in the help.
func (o backendOpts) Type() string { return "KEY=VALUE" }

func (o backendOpts) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", s)
	}
	o[k] = v
	return nil
}

// backendOptFlag registers --backend-opt on fs and returns the settings it
// collects.
func backendOptFlag(fs *flag.FlagSet) backendOpts {
	o := backendOpts{}
	fs.Var(o, "backend-opt", "a backend setting as `KEY=VALUE`, repeatable (onnxruntime: lib=PATH of libonnxruntime.so.1)")
	return o
}
