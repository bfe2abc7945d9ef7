package composition_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// A host embeds mcpward like this: build the Host of its deployment profile,
// hand it the configuration bytes it read (tagged with tier and origin),
// connect, and put the discovered tools into its own generic tool slot.
// Every server ends in a result the host can branch on.
func Example() {
	ctx := context.Background()
	workspace, _ := os.Getwd()
	host, cleanup, err := composition.Headless(
		composition.StateDir(os.ExpandEnv("$HOME/.local/state/myagent/mcp")),
		nil, // the host's ports.WorkspaceTrust; nil: untrusted, repository unknown
		composition.Config{
			Lookup:    os.LookupEnv,                           // ${VAR} templates; core never reads the environment itself
			Authority: composition.NewEnvAuthority(workspace), // who may spawn stdio servers, and with which env
			Actor:     "myagent",                              // labels approvals and audit records
		})
	if err != nil {
		log.Fatal(err)
	}
	defer cleanup()

	user, _ := os.ReadFile(os.ExpandEnv("$HOME/.config/myagent/mcp.json"))
	srcs := []definition.Source{{Tier: ports.TierUser, Origin: "~/.config/myagent/mcp.json", Data: user}}

	fleet := host.Connect(ctx, srcs, nil)
	defer fleet.Close()
	for _, s := range fleet.Servers() {
		// s.State is allowed/denied/refused/... or connected/failed; a
		// failure carries a refusal.Class to branch on and a reason word.
		fmt.Println(s.Name, s.State, s.Reason, len(s.Tools))
	}

	var slot []ports.Tool // the host's generic tool slot
	slot = append(slot, fleet.Set().HostTools()...)
	for _, t := range slot {
		res, err := t.Call(ctx, json.RawMessage(`{}`))
		if refusal.ClassOf(err) == refusal.Config {
			continue // invalid arguments, refused before anything was sent
		}
		_ = res // res.Content is cut to the admission cap; res.Truncated says so
	}
}

// A host with its own sign-in page drives the OAuth sign-in of a server
// whose definition has "oauth": it shows the authorization URL, and the
// browser's redirect comes back to a 127.0.0.1 listener (or the user pastes
// it, when the browser runs on another machine). Connections to that
// server then carry the stored credential, refreshed when it expires.
func ExampleHost_BeginSignIn() {
	ctx := context.Background()
	host, cleanup, err := composition.Desktop( // tokens in the OS keychain
		composition.StateDir(os.ExpandEnv("$HOME/.local/state/myagent/mcp")), nil, nil,
		composition.Config{Lookup: os.LookupEnv, OAuth: &composition.OAuthConfig{ClientName: "myagent"}})
	if err != nil {
		log.Fatal(err)
	}
	defer cleanup()
	user, _ := os.ReadFile(os.ExpandEnv("$HOME/.config/myagent/mcp.json"))
	srcs := []definition.Source{{Tier: ports.TierUser, Origin: "~/.config/myagent/mcp.json", Data: user}}

	signIn, err := host.BeginSignIn(ctx, srcs, "notes")
	if err != nil {
		log.Fatal(err) // a *refusal.Error: not an oauth server, not approved, discovery refused, ...
	}
	defer signIn.Close()
	fmt.Println("open", signIn.URL())
	if err := signIn.Wait(ctx); err != nil { // or signIn.Complete(ctx, pastedRedirect)
		log.Fatal(err)
	}
	state, _ := host.SignInState(ctx, srcs, "notes")
	fmt.Println("notes:", state) // signed_in
}
