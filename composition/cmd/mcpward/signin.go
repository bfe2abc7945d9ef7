package main

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/core/refusal"
)

// loginTimeout bounds how long login waits for the browser's redirect.
const loginTimeout = 10 * time.Minute

// signInJSON is the --json output of login and logout.
type signInJSON struct {
	Name  string `json:"name"`
	State string `json:"state"`
}

// login signs the user in to the OAuth server name: it prints the
// authorization URL on stderr, then takes whichever comes first: the
// browser's redirect on the loopback listener, or the redirect URL pasted
// on stdin (a browser on another machine cannot reach this one's
// 127.0.0.1). A pasted line that is not this sign-in's redirect ends the
// login with its refusal.
func (a *app) login(ctx context.Context, name string) int {
	ctx, cancel := context.WithTimeout(ctx, loginTimeout)
	defer cancel()
	p, err := a.host.BeginSignIn(ctx, librarySources(a.sources), name)
	if err != nil {
		return a.fail(err)
	}
	defer p.Close()
	fmt.Fprintf(a.env.stderr, "To sign in to %s, open this URL in your browser:\n\n  %s\n\n"+
		"Waiting for the sign-in to finish (at most %s). If your browser runs on another machine,\n"+
		"paste here the address it was sent to (it starts with %s) and press Enter.\n",
		name, p.URL(), loginTimeout, p.RedirectURI())

	waited := make(chan error, 1)
	go func() { waited <- p.Wait(ctx) }()
	pasted := make(chan string, 1)
	if a.env.stdin != nil {
		// A read of stdin cannot be cancelled; the goroutine ends with
		// the process (or at EOF).
		go func() {
			sc := bufio.NewScanner(a.env.stdin)
			for sc.Scan() {
				if line := strings.TrimSpace(sc.Text()); line != "" {
					pasted <- line
					return
				}
			}
		}()
	}
	select {
	case err = <-waited:
	case line := <-pasted:
		err = p.Complete(ctx, line)
	}
	if err != nil {
		return a.fail(err)
	}
	return a.signInDone(name, oauth.SignedIn, "signed in to "+name)
}

// logout deletes the stored credential of the OAuth server name and asks
// its issuer to revoke it.
func (a *app) logout(ctx context.Context, name string) int {
	if err := a.host.SignOut(ctx, librarySources(a.sources), name); err != nil {
		return a.fail(err)
	}
	return a.signInDone(name, oauth.SignedOut, "signed out of "+name)
}

// signInDone writes the outcome of login or logout.
func (a *app) signInDone(name string, st oauth.State, line string) int {
	if a.opts.json {
		writeJSON(a.env.stdout, signInJSON{Name: name, State: string(st)})
		return exitOK
	}
	fmt.Fprintln(a.env.stdout, line)
	return exitOK
}

// signInState is the sign-in state word of r when it is an OAuth server
// ("" otherwise), read from the token store without any request; a store
// that cannot say is "unknown (REASON)".
func (a *app) signInState(ctx context.Context, r composition.Result) string {
	if r.Auth != composition.AuthOAuth {
		return ""
	}
	st, err := a.host.SignInState(ctx, librarySources(a.sources), r.Name)
	if err != nil {
		return "unknown (" + refusal.ReasonOf(err) + ")"
	}
	return string(st)
}

// signInFinding is doctor's finding about a usable OAuth server whose
// sign-in state st is not signed_in.
func signInFinding(name, st string) findingJSON {
	f := findingJSON{Subject: "server", Name: name, State: "allowed", Reason: st,
		Fix: `run "mcpward login ` + name + `"`}
	switch st {
	case string(oauth.SignedOut):
		f.Why = "the server asks for OAuth and nobody signed in to it, so connecting it fails"
	case string(oauth.RefreshNeeded):
		f.Why = "its access token has expired; the next connection refreshes it, or needs a new sign-in"
		f.Fix = `nothing, if the refresh succeeds; otherwise run "mcpward login ` + name + `"`
	default:
		f.Why = "its stored sign-in cannot be read (" + st + ")"
		f.Fix = `run "mcpward logout ` + name + `" to delete it, then "mcpward login ` + name + `"`
	}
	return f
}
