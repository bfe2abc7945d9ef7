package entries

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/clock"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/fleet"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/jsonout"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/progress"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
	"github.com/mcpward/mcpward/core/catalog"
)

// ListOptions are the inputs of the listing commands (prompts,
// resources).
type ListOptions struct {
	IO    *iostreams.IOStreams
	App   func() (*app.App, error)
	Clock clock.Clock
	JSON  bool
	// Names are the servers to connect; none means every usable one.
	Names []string
	// ConnectTimeout is --connect-timeout (0: no limit).
	ConnectTimeout time.Duration
}

// List connects opts.Names (none: every usable server) with connect
// progress on stderr, then prints each server's entries: with --json one
// array of toJSON's values, else write's text, a blank line between
// servers. It returns cmdutil.ErrCancelled when ctx ended, and
// cmdutil.ErrSilent when a server failed (see Failed).
func List[T any](ctx context.Context, opts *ListOptions, toJSON func(composition.ServerStatus, *catalog.Catalog) T,
	write func(io.Writer, composition.ServerStatus, *catalog.Catalog)) error {
	a, err := opts.App()
	if err != nil {
		return err
	}
	rep := progress.New(progress.Options{
		Out: opts.IO.ErrOut, Clock: opts.Clock, Live: opts.IO.CanRedraw(), Width: opts.IO.TerminalWidth(),
		ConnectTimeout: opts.ConnectTimeout,
	})
	rep.Start()
	f := fleet.Connect(ctx, a, opts.Names, fleet.SupervisorOptions(fleet.Timeouts{Connect: opts.ConnectTimeout}), rep)
	defer f.Close()
	if ctx.Err() != nil {
		rep.Finish(nil)
		return cmdutil.ErrCancelled
	}
	rs := f.Servers()
	rep.Finish(rs)
	failed := false
	out := make([]T, 0, len(rs))
	for i, r := range rs {
		failed = failed || Failed(r, len(opts.Names) > 0)
		cat, _ := f.ServerCatalog(r.Name)
		if opts.JSON {
			out = append(out, toJSON(r, cat))
			continue
		}
		if i > 0 {
			fmt.Fprintln(opts.IO.Out)
		}
		write(opts.IO.Out, r, cat)
	}
	if opts.JSON {
		_ = jsonout.Write(opts.IO.Out, out)
	} else if len(rs) == 0 {
		fmt.Fprintln(opts.IO.Out, "No MCP servers are defined. Run \"mcpward doctor\" to see which files were read.")
	}
	if failed {
		for _, r := range rs {
			if r.State == composition.StateFailed {
				fmt.Fprintln(opts.IO.ErrOut, "mcpward: hint: "+view.DoctorHint(r.Name, r.Reason, r.Detail))
			}
		}
		return cmdutil.ErrSilent
	}
	return nil
}
