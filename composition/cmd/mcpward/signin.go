package main

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpward/mcpward/adapters/oauth"
)

// loginTimeout bounds how long login waits for the browser's redirect.
const loginTimeout = 10 * time.Minute

// signInJSON is the --json output of login and logout.
type signInJSON struct {
	Name  string `json:"name"`
	State string `json:"state"`
}

// login signs the user in to the OAuth server name: it prints the
// authorization URL on stderr and waits for the browser's redirect on a
// loopback listener.
func (a *app) login(ctx context.Context, name string) int {
	ctx, cancel := context.WithTimeout(ctx, loginTimeout)
	defer cancel()
	open := func(authURL string) error {
		fmt.Fprintf(a.env.stderr, "To sign in to %s, open this URL in your browser:\n\n  %s\n\nwaiting for the sign-in to finish (at most %s)…\n", name, authURL, loginTimeout)
		return nil
	}
	if err := a.host.SignIn(ctx, librarySources(a.sources), name, open); err != nil {
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
