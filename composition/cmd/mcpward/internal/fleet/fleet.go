// Package fleet is how the CLI connects servers: the supervision its
// timeout flags ask for, and a Connect that reports progress.
package fleet

import (
	"context"
	"time"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/progress"
	"github.com/mcpward/mcpward/core/supervisor"
)

// Defaults of the timeout flags.
const (
	// DefaultConnectTimeout is --connect-timeout's default: how long one
	// attempt to connect a server (start, initialize, first discovery)
	// may take.
	DefaultConnectTimeout = 30 * time.Second
	// DefaultCallTimeout is --call-timeout's default: how long one tool
	// call may take.
	DefaultCallTimeout = 10 * time.Minute
)

// noTimeout is what a supervisor option takes for "no limit". The flags
// take 0 for it.
const noTimeout = supervisor.NoTimeout

// ReasonCallTimeout is the reason of a call that outlived its
// --call-timeout (Class Transient). It is the supervisor's word for it.
const ReasonCallTimeout = supervisor.ReasonCallTimeout

// Timeouts are the timeout flags of tools and call; 0 means no limit.
type Timeouts struct {
	Connect time.Duration
	Call    time.Duration
}

// SupervisorOptions are the supervisor options of a CLI run with t: a few
// attempts, each bounded by t.Connect, so a command never hangs on a dead
// server unless asked to.
func SupervisorOptions(t Timeouts) *supervisor.Options {
	return &supervisor.Options{
		MaxAttempts:    3,
		MaxDelay:       2 * time.Second,
		ConnectTimeout: limit(t.Connect),
		// A call runs for t.Call without a progress notification from the
		// server; each one restarts that window, up to the supervisor's
		// hard maximum (supervisor.DefaultCallTimeoutMax) in all.
		CallTimeout: limit(t.Call),
	}
}

// limit maps a flag's duration to a supervisor option: 0 (no limit) is
// noTimeout.
func limit(d time.Duration) time.Duration {
	if d == 0 {
		return noTimeout
	}
	return d
}

// Connect connects the servers named (every usable one when none) under
// sup, reporting each status to rep (when not nil).
func Connect(ctx context.Context, a *app.App, names []string, sup *supervisor.Options, rep *progress.Reporter) *composition.Fleet {
	opts := &composition.ConnectOptions{Names: names, Supervisor: sup}
	if rep != nil {
		opts.OnStatus = rep.OnStatus
	}
	return a.Host.Connect(ctx, a.LibrarySources(), opts)
}
