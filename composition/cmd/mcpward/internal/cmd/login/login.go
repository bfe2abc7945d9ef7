// Package login is "mcpward login NAME": sign in to an OAuth server.
package login

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/jsonout"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
	"github.com/mcpward/mcpward/core/refusal"
)

// DefaultTimeout bounds how long login waits for the browser's redirect.
const DefaultTimeout = 10 * time.Minute

// Options are login's inputs.
type Options struct {
	IO   *iostreams.IOStreams
	App  func() (*app.App, error)
	JSON bool
	// Name is the server to sign in to.
	Name string
	// Timeout bounds the whole sign-in.
	Timeout time.Duration
}

// NewCmdLogin returns the login command; runF, when not nil, replaces Run.
func NewCmdLogin(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, App: f.App, Timeout: DefaultTimeout}
	return &cobra.Command{
		Use:   "login NAME",
		Short: "Sign in to the OAuth server NAME",
		Long: `Sign in to the HTTP server NAME: one whose definition has "oauth", or one
that answered with a Bearer challenge (listed as oauth_sign_in_required by
tools and call; its definition needs no "oauth" key). mcpward prints
the URL to open in your browser, then waits (at most 10 minutes) for the
browser's redirect to 127.0.0.1, or for the redirect's address pasted on
stdin (when the browser runs on another machine).

mcpward discovers the authorization server from the server's own metadata and
refuses anything it cannot check: a resource or issuer that does not match,
an endpoint that is not https, no PKCE S256. It registers itself when the
definition names no clientId. The tokens are kept for that server name and
URL together (in the OS keychain with --profile desktop, else under the
state directory) and are refreshed when they expire; tools and call then
use them.

With --json: {"name", "state": "signed_in"}.`,
		Example: `  $ mcpward login notes
  $ mcpward --profile desktop login notes`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON, opts.Name = f.Globals.JSON, args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
}

// Run signs the user in to opts.Name: it prints the authorization URL on
// stderr, then takes whichever comes first: the browser's redirect on the
// loopback listener, or the redirect URL pasted on stdin. A pasted line
// that is not this sign-in's redirect ends the login with its refusal.
func Run(ctx context.Context, opts *Options) error {
	a, err := opts.App()
	if err != nil {
		return err
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	p, err := a.Host.BeginSignIn(ctx, a.LibrarySources(), opts.Name)
	if err != nil {
		if rep := oauth.ReportOf(err); rep != nil && !opts.JSON {
			if rep.Reason == "" {
				rep.Reason = refusal.ReasonOf(err)
			}
			// Where discovery stopped, step by step, and what to do.
			view.WriteDiscovery(opts.IO.ErrOut, opts.Name, rep)
		}
		if fix := Fix(opts.Name, err); fix != "" {
			return &cmdutil.NotedError{Err: err, Note: fix}
		}
		return err
	}
	defer p.Close()
	fmt.Fprintf(opts.IO.ErrOut, "To sign in to %s, open this URL in your browser:\n\n  %s\n\n"+
		"Waiting for the sign-in to finish (at most %s). If your browser runs on another machine,\n"+
		"paste here the address it was sent to (it starts with %s) and press Enter.\n",
		termsafe.Line(opts.Name), termsafe.Line(p.URL()), opts.Timeout, termsafe.Line(p.RedirectURI()))

	waited := make(chan error, 1)
	go func() { waited <- p.Wait(ctx) }()
	pasted := make(chan string, 1)
	if opts.IO.In != nil {
		// A read of stdin cannot be cancelled; the goroutine ends with
		// the process (or at EOF).
		go readPasted(opts.IO.In, pasted)
	}
	select {
	case err = <-waited:
	case line := <-pasted:
		err = p.Complete(ctx, line)
	}
	if err != nil {
		if parent.Err() != nil {
			return cmdutil.ErrCancelled
		}
		return err
	}
	return Done(opts.IO, opts.JSON, opts.Name, oauth.SignedIn, "signed in to "+opts.Name)
}

// readPasted sends the first non-empty line of in.
func readPasted(in io.Reader, pasted chan<- string) {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			pasted <- line
			return
		}
	}
}

// Done writes the outcome of login or logout.
func Done(io *iostreams.IOStreams, asJSON bool, name string, st oauth.State, line string) error {
	if asJSON {
		_ = jsonout.Write(io.Out, view.SignIn{Name: name, State: string(st)})
		return nil
	}
	fmt.Fprintln(io.Out, termsafe.Line(line))
	return nil
}

// Fix is the one line of why and what to do for login's refusal err of
// name ("" when there is nothing to add).
func Fix(name string, err error) string {
	n := termsafe.Line(name)
	switch refusal.ReasonOf(err) {
	case composition.ReasonNotOAuth:
		return "why: " + n + " is not an HTTP server, or its headers come from a headersHelper, so there is nothing to sign in to with OAuth; to do: nothing if the helper or its ${VAR} headers provide the credential"
	case composition.ReasonNotUsable:
		return "why: mcpward signs in only to a server it would use; to do: see \"mcpward show " + n + "\" (approve it first if it awaits approval)"
	case composition.ReasonUnknownServer:
		return "why: no configuration file defines " + n + "; to do: check the name with \"mcpward list\""
	}
	return ""
}
