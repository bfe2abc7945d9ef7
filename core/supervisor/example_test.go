package supervisor_test

import (
	"context"
	"fmt"

	"github.com/mcpward/mcpward/core/supervisor"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

func Example() {
	// A scripted server with one tool; a host passes its real Connector.
	connector := portstest.NewConnector(portstest.SessionScript{
		Identity: ports.SessionIdentity{
			ProtocolVersion: "2025-11-25",
			ServerVersion:   "1.0.0",
			Declared:        []ports.ListKind{ports.ListTools},
		},
		Pages: map[ports.ListKind]map[string]ports.Page{
			ports.ListTools: {"": {Tools: []ports.ToolItem{{
				Name:        "echo",
				InputSchema: map[string]any{"type": "object"},
			}}}},
		},
	})
	srv := supervisor.New(connector, ports.Target{ServerID: "demo", Kind: ports.TransportHTTP}, nil)
	defer srv.Close()

	if err := srv.Connect(context.Background()); err != nil {
		fmt.Println("connect:", err)
		return
	}
	st := srv.Status()
	fmt.Println(st.State, len(st.Catalog.Tools), st.Catalog.Complete())

	_ = srv.Close()
	_, err := srv.Call(context.Background(), ports.CallRequest{Name: "echo"})
	fmt.Println(srv.Status().State, err)
	// Output:
	// ready 1 true
	// closed mcpward: internal: closed (server "demo"): the server was closed
}
