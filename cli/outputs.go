package cli

import (
	"errors"
	flag "github.com/spf13/pflag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// An output named on the command line (a report, a CSV, a model, a
// folder of figures) is checked before the work that fills it starts: a
// path that cannot be written is bad usage (exit status 2), found in a
// second, not after an hour of training or a whole bench.

// output is one output flag's path, and whether it names a folder.
type output struct {
	flag, path string
	dir        bool
}

// fileOut and dirOut name a file and a folder output.
func fileOut(flag, path string) output { return output{flag: flag, path: path} }
func dirOut(flag, path string) output  { return output{flag: flag, path: path, dir: true} }

// checkOutputs checks every output with a path (those left empty are not
// asked for) and returns -1 when all can be written, else the usage
// error's exit status after saying which cannot and why.
func checkOutputs(fs *flag.FlagSet, stderr io.Writer, outs ...output) int {
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		if err := writable(o.path, o.dir); err != nil {
			return usageError(fs, stderr, "--%s %s: cannot be written: %v", o.flag, o.path, err)
		}
	}
	return -1
}

// writable reports why path cannot be written as a file (dir false) or as
// a folder to write files into: an existing file must be writable and not
// a folder, an existing folder must take a new file, and a path that does
// not exist yet gets its folders made (the folder itself, for a folder
// output), the last of which must take a new file. Only those folders
// stay; the file is written by the command.
func writable(path string, dir bool) error {
	info, err := os.Stat(path)
	switch {
	case err == nil && info.IsDir() && !dir:
		return errors.New("it is a folder")
	case err == nil && info.IsDir():
		return probe(path)
	case err == nil && dir:
		return errors.New("it is a file, not a folder")
	case err == nil:
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		return f.Close()
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	folder := filepath.Dir(path)
	if dir {
		folder = path
	}
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return err
	}
	return probe(folder)
}

// probe creates and removes a file in the folder dir.
func probe(dir string) error {
	f, err := os.CreateTemp(dir, ".d500-write-check-*")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
