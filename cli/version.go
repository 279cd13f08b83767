package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/deep500/deep500-go/backend"
	"github.com/deep500/deep500-go/backend/onnxruntime"
	"github.com/deep500/deep500-go/metrics"
	"github.com/spf13/cobra"
)

// versionLine is d500's one-line version: the commit it was built from
// (with "+modified" when the tree had changes) and the Go release. Every
// command makes it (cobra's --version), so it reads the build stamp
// alone, not the whole environment, whose probes load libraries.
func versionLine() string {
	commit, modified, _ := metrics.BuildStamp()
	if commit == "" {
		commit = "unknown commit"
	} else if len(commit) > 12 {
		commit = commit[:12]
	}
	if modified {
		commit += "+modified"
	}
	return fmt.Sprintf("d500 %s (%s %s/%s)", commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// The versions every report's environment records of what the backends
// linked in run on: the ONNX Runtime library a run would load (with its
// --backend-opt lib=PATH where the command passes its settings), and the
// Go modules of the engines. The library is loaded to ask it, as a run
// with it would; the reports make their environment after the run, so a
// run's own choice of library is never pre-empted.
func init() {
	deps := moduleVersions()
	metrics.RegisterVersionProbe("onnxruntime", func(settings map[string]string) (string, error) {
		return onnxruntime.LibraryVersion(backend.Options{Settings: settings})
	})
	for name, module := range map[string]string{
		"onnxruntime_go": "github.com/yalue/onnxruntime_go",
		"gorgonia":       "gorgonia.org/gorgonia",
	} {
		if v := deps[module]; v != "" {
			metrics.RegisterVersionProbe(name, func(map[string]string) (string, error) { return v, nil })
		}
	}
}

// moduleVersions are the versions of the modules built in, by path.
func moduleVersions() map[string]string {
	deps := map[string]string{}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			deps[d.Path] = d.Version
		}
	}
	return deps
}

// newVersionCommand is `d500 version`: the version line, then each
// backend linked in with the version of what it runs on — the Go modules
// of the engines and the ONNX Runtime library found (or why none is).
func newVersionCommand(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print d500's commit and Go version, and the backends' versions",
		Args:  cobra.NoArgs,
		Run: func(*cobra.Command, []string) {
			fmt.Fprintln(stdout, versionLine())
			deps := moduleVersions()
			for _, name := range backend.Names() {
				fmt.Fprintf(stdout, "backend %s: %s\n", name, backendVersion(name, deps))
			}
		},
	}
}

// backendVersion says what the backend name runs on, from the build's
// module versions deps.
func backendVersion(name string, deps map[string]string) string {
	switch name {
	case "native":
		return "built in"
	case "gorgonia":
		return "gorgonia.org/gorgonia " + or(deps["gorgonia.org/gorgonia"], "(version unknown)")
	case "onnxruntime":
		lib := onnxruntime.LibraryPath(backend.Options{})
		v, err := onnxruntime.LibraryVersion(backend.Options{})
		if err != nil {
			return "github.com/yalue/onnxruntime_go " + or(deps["github.com/yalue/onnxruntime_go"], "(version unknown)") +
				", library not loaded: " + strings.SplitN(err.Error(), ": ", 2)[len(strings.SplitN(err.Error(), ": ", 2))-1]
		}
		return fmt.Sprintf("ONNX Runtime %s (%s), github.com/yalue/onnxruntime_go %s", v, lib, or(deps["github.com/yalue/onnxruntime_go"], "(version unknown)"))
	}
	return "linked in"
}

// or is s, or alt when s is empty.
func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
