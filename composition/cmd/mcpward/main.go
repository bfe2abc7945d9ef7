// Command mcpward shows, approves, revokes, connects and calls the MCP
// servers a person's configuration files define, and explains why each
// one is or is not usable. Run "mcpward --help" for the commands, the
// global flags and the exit codes, and "mcpward help COMMAND" for one
// command's flags, output and --json shape.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"syscall"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/clock"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/root"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/interrupt"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/telemetry"
)

// version is what --version prints. Set it at build time with
// -ldflags "-X main.version=v1.2.3"; when unset it comes from the build
// information the go command records (see buildVersion).
var version = ""

func main() {
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpward: the working directory cannot be read")
		os.Exit(cmdutil.ExitFailure)
	}
	ios := iostreams.System()
	v := buildVersion(version, debug.ReadBuildInfo)
	// OpenTelemetry from the OTEL_* variables (none set: none); console
	// output goes to stderr, never stdout.
	tel := telemetry.New(context.Background(), os.LookupEnv, ios.ErrOut, v)
	f := cmdutil.New(ios, app.Env{
		Lookup:         os.LookupEnv,
		Cwd:            cwd,
		ManagedPath:    app.DefaultManagedPath,
		Log:            ios.ErrOut,
		TracerProvider: tel.TracerProvider,
		MeterProvider:  tel.MeterProvider,
	}, clock.Real())
	// The first SIGINT, SIGTERM or SIGHUP cancels the run: the command
	// returns, its fleet closes (ending every server's process group) and
	// mcpward exits 128+signal. A second one kills the servers at once and
	// exits. The first one ends the program whatever it is blocked on: a
	// run that has not returned interrupt.QuietGrace after it with no
	// server left to stop, or interrupt.StopBound after it at all (a read
	// no context reaches: a pipe or terminal that never answers), is ended
	// there, its servers killed.
	done := make(chan struct{})
	h := interrupt.Notify(context.Background(),
		func(sig os.Signal) {
			fmt.Fprintf(ios.ErrOut, "mcpward: %s: stopping the servers (again to stop at once)\n", signalName(sig))
			go func() {
				if interrupt.Watch(done, interrupt.HasChildren, interrupt.QuietGrace, interrupt.StopBound) {
					interrupt.KillChildren()
					os.Exit(interrupt.ExitCode(sig))
				}
			}()
		},
		func(sig os.Signal) {
			interrupt.KillChildren()
			os.Exit(interrupt.ExitCode(sig))
		},
		interrupt.Signals...)
	code := root.Main(h.Context(), f, os.Args[1:], v)
	close(done)
	if err := tel.Shutdown(context.Background()); err != nil {
		fmt.Fprintln(ios.ErrOut, "mcpward: telemetry: not every span or metric was exported")
	}
	if sig := h.Signal(); sig != nil {
		code = interrupt.ExitCode(sig)
	}
	h.Stop()
	os.Exit(code)
}

// signalName is "interrupted" for SIGINT, else the signal's own words.
func signalName(sig os.Signal) string {
	if sig == syscall.SIGINT {
		return "interrupted"
	}
	return sig.String()
}

// buildVersion is v when set; otherwise the main module's version from the
// build information ("devel" for a build from a checkout), with the VCS
// revision when recorded ("devel (3f2a1b9c0d1e, modified)").
func buildVersion(v string, read func() (*debug.BuildInfo, bool)) string {
	if v != "" {
		return v
	}
	info, ok := read()
	if !ok {
		return "unknown"
	}
	v = info.Main.Version
	if v != "" && v != "(devel)" {
		return v
	}
	v = "devel"
	rev, modified := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if modified {
			rev += ", modified"
		}
		v += " (" + rev + ")"
	}
	return v
}
