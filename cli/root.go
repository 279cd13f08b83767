package cli

import (
	"io"
	"strings"
	"sync"

	"github.com/deep500/deep500-go/models"
	"github.com/spf13/cobra"
	flag "github.com/spf13/pflag"
)

// rootLong is the top of `d500 help`.
const rootLong = `d500 measures deep-learning engines: ONNX conformance and gradients per
operator, inference speed against ONNX Runtime, training with reference,
native and distributed optimizers, compared step by step.

Exit status: 0 success; 1 failed checks or run errors; 2 bad usage (an
unknown command or flag, an invalid flag value, an unknown name, an input
that cannot be read or an output that cannot be written); 130 interrupted
(SIGINT or SIGTERM: the command stops after its current case, row or step
and writes what it measured).`

// newRootCommand is the command tree of d500 on package cobra: a command
// per entry of commands, plus help, version and completion. Each command
// parses its own flags (its flag set, GNU style), so that the flags it
// defines are the one definition of them: cobra is told not to parse, and
// learns the flags only to complete them (flagCompletion). The exit status
// of the command run is stored in *code.
func newRootCommand(stdout, stderr io.Writer, code *int) *cobra.Command {
	root := &cobra.Command{
		Use:           "d500",
		Short:         "a meta-framework and benchmark for deep learning in Go",
		Long:          rootLong,
		Version:       versionLine(),
		SilenceErrors: true,
		SilenceUsage:  true,
		// No Args: cobra then reports a word that is no command as
		// "unknown command" (its legacy check), not as arguments.
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetVersionTemplate("{{.Version}}\n")
	root.CompletionOptions.HiddenDefaultCmd = false
	for _, c := range commands {
		sub := &cobra.Command{
			Use:                c.name,
			Short:              c.summary,
			DisableFlagParsing: true,
			RunE: func(_ *cobra.Command, args []string) error {
				*code = c.run(args, stdout, stderr)
				return nil
			},
			ValidArgsFunction: flagCompletion(c),
		}
		// `d500 help CMD` prints what `d500 CMD --help` does: the
		// command's synopsis and flags, on standard output.
		sub.SetHelpFunc(func(*cobra.Command, []string) { c.run([]string{"--help"}, stdout, stderr) })
		root.AddCommand(sub)
	}
	root.AddCommand(newVersionCommand(stdout))
	return root
}

// flagCompletion completes a command's flags (and a preset name for
// `d500 model`): the flags come from the command's own flag set, made by
// running the command in describing mode (flagsOf).
func flagCompletion(c command) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if strings.HasPrefix(toComplete, "-") {
			var out []cobra.Completion
			for _, f := range flagsOf(c) {
				if strings.HasPrefix(f, toComplete) {
					out = append(out, f)
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		}
		if c.name == "model" && len(args) == 0 {
			return models.PresetNames(), cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveDefault
	}
}

// flagsOf returns the command's flags as "--name", found by running it in
// describing mode: given describeArg alone, parseArgs hands the command's
// flag set to described and returns at once, before the command does
// anything.
func flagsOf(c command) []string {
	described.Lock()
	defer described.Unlock()
	described.fs = nil
	c.run([]string{describeArg}, io.Discard, io.Discard)
	var names []string
	if described.fs != nil {
		described.fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
	}
	return names
}

// describeArg is the argument that runs a command in describing mode; no
// user types it.
const describeArg = "\x00describe-flags"

// described is the flag set of the command flagsOf ran.
var described struct {
	sync.Mutex
	fs *flag.FlagSet
}
