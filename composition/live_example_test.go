package composition_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// A long-running host connects in the background and keeps its model's
// tools current: every generation of the Fleet (a server's tools/list_changed,
// a reconnect, a server added or removed) replaces the tools it offers. A
// call the model makes with a tool it saw earlier either goes through, or
// is refused by name when the tool changed or vanished meanwhile.
func ExampleFleet_Current() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	host, cleanup, err := composition.Headless(composition.StateDir(os.ExpandEnv("$HOME/.local/state/myagent/mcp")),
		nil, composition.Config{Lookup: os.LookupEnv, Actor: "myagent"})
	if err != nil {
		log.Fatal(err)
	}
	defer cleanup()
	user, _ := os.ReadFile(os.ExpandEnv("$HOME/.config/myagent/mcp.json"))
	srcs := []definition.Source{{Tier: ports.TierUser, Origin: "~/.config/myagent/mcp.json", Data: user}}

	fleet := host.Connect(ctx, srcs, &composition.ConnectOptions{Background: true}) // returns at once
	defer fleet.Close()

	offer := func(tools []ports.Tool) { fmt.Println(len(tools), "tools") } // the host's own
	go func() {
		for {
			g := fleet.Current()
			if g.Closed {
				return
			}
			offer(g.Set.HostTools())
			select {
			case <-g.Changed:
			case <-ctx.Done():
				return
			}
		}
	}()

	// The model calls a tool by the name it was offered.
	_, err = fleet.CallTool(ctx, catalog.ToolName("notes", "search"), json.RawMessage(`{"q":"x"}`))
	switch refusal.ReasonOf(err) {
	case catalog.ReasonToolChanged, catalog.ReasonToolRemoved, composition.ReasonUnknownTool:
		// Tell the model its tools changed; it sees the current ones.
	}

	// A failed server is not final: connect it again once its cause is fixed.
	for _, s := range fleet.Servers() {
		if s.State == composition.StateFailed {
			_ = fleet.Reconnect(ctx, s.Name)
		}
	}
}
