package composition_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/headless"
)

// A long-running host connects in the background and keeps its model's
// tools current: every generation of the Fleet (a server's tools/list_changed,
// a reconnect, a server added or removed) replaces the tools it offers. A
// call the model makes with a tool it saw earlier either goes through, or
// is refused by name when the tool changed or vanished meanwhile.
func ExampleFleet_Current() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stateDir := os.ExpandEnv("$HOME/.local/state/myagent/mcp")
	host, cleanup, err := headless.Open(ctx, headless.Config{Dir: stateDir,
		Trust:  composition.GitWorkspace(".", &composition.WorkspaceOptions{StateDir: stateDir}),
		Config: composition.Config{Lookup: os.LookupEnv, Actor: "myagent", OAuth: &composition.OAuthConfig{}}})
	if err != nil {
		log.Fatal(err)
	}
	defer cleanup()
	user, _ := os.ReadFile(os.ExpandEnv("$HOME/.config/myagent/mcp.json"))
	srcs := []composition.Source{{Tier: composition.TierUser, Origin: "~/.config/myagent/mcp.json", Data: user}}

	fleet := host.Connect(ctx, srcs, &composition.ConnectOptions{Background: true}) // returns at once
	defer fleet.Close()

	offer := func(tools []composition.Tool) { fmt.Println(len(tools), "tools") } // the host's own
	go func() {
		for {
			g := fleet.Current()
			if g.Closed {
				return
			}
			offer(g.Set.ModelTools())
			select {
			case <-g.Changed:
			case <-ctx.Done():
				return
			}
		}
	}()

	// The model calls a tool by the name it was offered.
	_, err = fleet.CallHostTool(ctx, composition.ToolName("notes", "search"), json.RawMessage(`{"q":"x"}`))
	switch composition.ReasonOf(err) {
	case composition.ReasonToolChanged, composition.ReasonToolRemoved, composition.ReasonUnknownTool:
		// Tell the model its tools changed; it sees the current ones.
	case composition.ReasonServerUnavailable:
		// Tell the model the server is down.
	}

	// A failed server is not final: connect it again once its cause is
	// fixed (a sign-in, say).
	for _, s := range fleet.Servers() {
		if s.NeedsSignIn() {
			_ = host.SignIn(ctx, srcs, s.Name, func(authURL string) error { fmt.Println("open", authURL); return nil })
		}
		if s.State == composition.StateFailed {
			_ = fleet.Reconnect(ctx, s.Name)
		}
	}
}
