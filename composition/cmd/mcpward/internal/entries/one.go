package entries

import (
	"context"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/clock"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/fleet"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/jsonout"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/progress"
	"github.com/mcpward/mcpward/ports"
)

// One is what the commands that use one server's entries (prompt, read)
// need to connect it.
type One struct {
	IO    *iostreams.IOStreams
	App   func() (*app.App, error)
	Clock clock.Clock
	JSON  bool
	// Server is the server's name.
	Server string
	// Timeouts are --connect-timeout and --call-timeout (0: no limit).
	Timeouts fleet.Timeouts
}

// Connect connects o.Server alone, with connect progress on stderr, and
// returns its Fleet (the caller closes it): cmdutil.ErrCancelled when ctx
// ended, ServerErr's error when the server cannot be used (the Fleet then
// already closed).
func (o One) Connect(ctx context.Context) (*composition.Fleet, error) {
	a, err := o.App()
	if err != nil {
		return nil, err
	}
	rep := progress.New(progress.Options{
		Out: o.IO.ErrOut, Clock: o.Clock, Live: o.IO.CanRedraw(), Width: o.IO.TerminalWidth(),
		Quiet: progress.WaitAfter, ConnectTimeout: o.Timeouts.Connect,
	})
	rep.Start()
	f := fleet.Connect(ctx, a, []string{o.Server}, fleet.SupervisorOptions(o.Timeouts), rep)
	rep.Finish(nil)
	if ctx.Err() != nil {
		_ = f.Close()
		return nil, cmdutil.ErrCancelled
	}
	if err := ServerErr(f.Servers()[0]); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// Complete prints the server's completions of argument arg of ref (args
// the --args given: arg's value and the arguments already resolved), as
// JSON with o.JSON.
func (o One) Complete(ctx context.Context, f *composition.Fleet, ref ports.CompletionRef, arg string, args map[string]string) error {
	value, resolved := CompleteArgs(args, arg)
	c, err := f.Complete(ctx, o.Server, ref, arg, value, resolved)
	if ctx.Err() != nil {
		return cmdutil.ErrCancelled
	}
	if err != nil {
		return err
	}
	if o.JSON {
		_ = jsonout.Write(o.IO.Out, ToCompletion(o.Server, arg, c))
		return nil
	}
	WriteCompletion(o.IO.Out, c)
	return nil
}
