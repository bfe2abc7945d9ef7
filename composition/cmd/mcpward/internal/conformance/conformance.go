// Package conformance is the client program the official MCP conformance
// suite runs for its client scenarios (see the mcpward-conformance
// command). It drives the Host API of package composition the way an
// embedding host would: a definition of the scenario's server, Connect,
// a non-interactive sign-in when the server asks for one, then the
// scenario's tool call.
package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/headless"
	"github.com/mcpward/mcpward/composition/signin"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// Environment variables the suite sets for the client it runs.
const (
	// EnvScenario names the scenario.
	EnvScenario = "MCP_CONFORMANCE_SCENARIO"
	// EnvContext is the scenario's context, a JSON object.
	EnvContext = "MCP_CONFORMANCE_CONTEXT"
)

// serverName is the name the scenario's server is defined under.
const serverName = "conformance"

// Scenario is what the client does for one scenario: the tool it calls
// after listing (none: list only) and that tool's arguments, or the steps
// Do names.
type Scenario struct {
	Tool string
	Args string
	// Do, when set, names what the client does once connected in place of
	// calling Tool (one of the Do constants).
	Do string
	// Auth marks a scenario whose server asks for a sign-in.
	Auth bool
	// Grant is how the client signs in: GrantCode (the authorization code
	// flow, following the authorization URL itself), or one of the grants
	// without a browser of auth.go.
	Grant string
}

// GrantCode is the Grant of the authorization code flow.
const GrantCode = ""

// The steps a Scenario's Do names.
const (
	// DoEveryKind calls the first tool, reads the first resource and gets
	// the first prompt the server lists (each list only when declared).
	DoEveryKind = "every_kind"
	// DoContextCalls makes the tool calls the scenario's context lists
	// ("toolCalls"), each whatever the one before gave.
	DoContextCalls = "context_calls"
	// DoCallAll calls every admitted tool with {"region":"us-west1"}.
	DoCallAll = "call_all"
	// DoCallEach calls the tools Scenario.Args lists (a JSON array of
	// names), each with {}, whatever the one before gave.
	DoCallEach = "call_each"
	// DoEchoSchema calls "json_schema_echo" with the inputSchema of
	// "json_schema_2020_12_tool" as the server wrote it.
	DoEchoSchema = "echo_schema"
)

// scenarios are the client scenarios that do more than list; every other
// scenario (initialize, and each auth/ scenario, which calls "test-tool")
// is found by Lookup.
var scenarios = map[string]Scenario{
	"initialize":                          {},
	"tools_call":                          {Tool: "add_numbers", Args: `{"a":5,"b":3}`},
	"sse-retry":                           {Tool: "test_reconnection", Args: `{}`},
	"elicitation-sep1034-client-defaults": {Tool: "test_client_elicitation_defaults", Args: `{}`},
	// Protocol 2026-07-28: connecting is the test (server/discover retried
	// with the version the server names; _meta and the version header on
	// every request).
	"request-metadata": {},
	// A tool whose inputSchema $refs a network URL: listing must not
	// fetch it.
	"json-schema-ref-no-deref": {},
	"sep-2322-client-request-state": {Do: DoCallEach,
		Args: `["test_mrtr_echo_state","test_mrtr_no_state","test_mrtr_unrelated","test_mrtr_no_result_type"]`},
	"http-standard-headers":            {Do: DoEveryKind},
	"http-custom-headers":              {Do: DoContextCalls},
	"http-invalid-tool-headers":        {Do: DoCallAll},
	"json-schema-2020-12-preservation": {Do: DoEchoSchema},
}

// Lookup returns what the client does for scenario name, and false for a
// name it does not know.
func Lookup(name string) (Scenario, bool) {
	if s, ok := scenarios[name]; ok {
		return s, true
	}
	if strings.HasPrefix(name, "auth/") && len(name) > len("auth/") {
		return Scenario{Tool: "test-tool", Args: `{}`, Auth: true, Grant: authGrant(name)}, true
	}
	return Scenario{}, false
}

// Context is the part of the suite's MCP_CONFORMANCE_CONTEXT the client
// reads: a pre-registered client, or client credentials.
type Context struct {
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`
	// Cross-app access: the user's ID token from the enterprise IdP, and
	// this client there.
	IdPClientID      string `json:"idp_client_id"`
	IdPIDToken       string `json:"idp_id_token"`
	IdPTokenEndpoint string `json:"idp_token_endpoint"`
	// ToolCalls are the calls DoContextCalls makes.
	ToolCalls []ToolCall `json:"toolCalls"`
	// AuthContext: what the auth extensions add (auth.go).
	AuthContext
}

// ToolCall is one call of Context.ToolCalls.
type ToolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Main runs one scenario: args ends with the server URL, lookup reads
// EnvScenario and EnvContext. It writes one line per step to log and
// returns the exit code: 0 when every step succeeded, 1 otherwise, 2 for a
// usage error.
func Main(ctx context.Context, args []string, lookup func(string) (string, bool), log io.Writer) int {
	name, _ := lookup(EnvScenario)
	sc, ok := Lookup(name)
	if len(args) == 0 || !ok {
		fmt.Fprintln(log, "usage: MCP_CONFORMANCE_SCENARIO=NAME mcpward-conformance SERVER_URL (a scenario of the suite)")
		return 2
	}
	var cc Context
	if raw, ok := lookup(EnvContext); ok && raw != "" {
		if err := json.Unmarshal([]byte(raw), &cc); err != nil {
			fmt.Fprintln(log, "mcpward-conformance: MCP_CONFORMANCE_CONTEXT is not a JSON object")
			return 2
		}
	}
	if err := Run(ctx, args[len(args)-1], sc, cc, log); err != nil {
		fmt.Fprintf(log, "mcpward-conformance: %s: %s\n", name, describe(err))
		return 1
	}
	return 0
}

// describe is err's class and reason (and detail), never more.
func describe(err error) string {
	var r *refusal.Error
	if errors.As(err, &r) {
		s := r.Class.String() + " " + r.Reason
		if r.Detail != "" {
			s += " (" + r.Detail + ")"
		}
		return s
	}
	return err.Error()
}

// Run connects to the server at serverURL through a Host of the headless
// profile on a temporary state directory, signs in when the server asks
// for it, lists the tools and calls sc's tool.
func Run(ctx context.Context, serverURL string, sc Scenario, cc Context, log io.Writer) error {
	dir, err := os.MkdirTemp("", "mcpward-conformance-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	host, cleanup, err := headless.Open(ctx, headless.Config{Dir: dir, Config: composition.Config{
		Actor: "conformance",
		OAuth: oauthConfig(),
	}})
	if err != nil {
		return err
	}
	defer cleanup()
	srcs, err := sources(serverURL, cc)
	if err != nil {
		return err
	}

	fleet, sr := connect(ctx, host, srcs)
	defer func() { fleet.Close() }()
	fmt.Fprintf(log, "connect: %s %s %s\n", sr.State, sr.Class, sr.Reason)
	signIns := 0
	// again signs in (at most maxSignIns times in all) and connects anew.
	again := func() error {
		if signIns == maxSignIns {
			return errors.New("no more sign-ins: the server keeps asking")
		}
		signIns++
		fleet.Close()
		if err := signIn(ctx, host, srcs, sc, cc, log); err != nil {
			return err
		}
		fleet, sr = connect(ctx, host, srcs)
		fmt.Fprintf(log, "connect after sign-in: %s %s %s\n", sr.State, sr.Class, sr.Reason)
		return nil
	}
	// A server may ask again right after a sign-in: it moved to another
	// authorization server, say (authorization_server_changed).
	for asksSignIn(sr) {
		if err := again(); err != nil {
			return err
		}
	}
	if sr.State != composition.StateConnected || asksSignIn(sr) {
		return &refusal.Error{Class: sr.Class, Reason: sr.Reason, Server: serverName}
	}
	fmt.Fprintf(log, "tools: %d (protocol %s)\n", len(sr.Tools), sr.ProtocolVersion)
	call := func(tool string, args json.RawMessage) error {
		for {
			res, err := fleet.CallServerTool(ctx, serverName, tool, args)
			if err == nil {
				fmt.Fprintf(log, "call %s: is_error=%v\n", tool, res.IsError)
				return nil
			}
			fmt.Fprintf(log, "call %s: %s\n", tool, describe(err))
			// A step-up: the server wants more scope for this call.
			if c := refusal.ClassOf(err); c != refusal.AuthRequired && c != refusal.AuthRefused {
				return err
			}
			if err := again(); err != nil {
				return err
			}
		}
	}
	switch sc.Do {
	case "":
		if sc.Tool == "" {
			return nil
		}
		return call(sc.Tool, json.RawMessage(sc.Args))
	case DoCallEach:
		var names []string
		if err := json.Unmarshal([]byte(sc.Args), &names); err != nil {
			return err
		}
		for _, n := range names {
			_ = call(n, json.RawMessage(`{}`)) // logged; the server judges
		}
		return nil
	case DoContextCalls:
		for _, c := range cc.ToolCalls {
			_ = call(c.Name, withoutNulls(c.Arguments))
		}
		return nil
	case DoCallAll:
		for _, t := range sr.Tools {
			_ = call(t.NameOnServer, json.RawMessage(`{"region":"us-west1"}`))
		}
		return nil
	case DoEveryKind:
		return everyKind(ctx, fleet, sr, call, log)
	case DoEchoSchema:
		return echoSchema(sr, call)
	}
	return fmt.Errorf("unknown steps %q", sc.Do)
}

// everyKind calls the server's first tool, reads its first resource and
// gets its first prompt (each only when the server lists one), logging
// each failure: the server judges the requests.
func everyKind(ctx context.Context, fleet *composition.Fleet, sr composition.ServerStatus, call func(string, json.RawMessage) error, log io.Writer) error {
	if len(sr.Tools) > 0 {
		_ = call(sr.Tools[0].NameOnServer, json.RawMessage(`{}`))
	}
	cat, err := fleet.ServerCatalog(serverName)
	if err != nil {
		return err
	}
	if len(cat.Resources) > 0 {
		_, err := fleet.ReadResource(ctx, serverName, cat.Resources[0].URI())
		fmt.Fprintf(log, "read: %s\n", describeOrOK(err))
	}
	if len(cat.Prompts) > 0 {
		_, err := fleet.GetPrompt(ctx, serverName, cat.Prompts[0].NameOnServer(), map[string]string{})
		fmt.Fprintf(log, "prompt: %s\n", describeOrOK(err))
	}
	return nil
}

// echoSchema passes the focal tool's inputSchema, as the server wrote it,
// to the echo tool.
func echoSchema(sr composition.ServerStatus, call func(string, json.RawMessage) error) error {
	const focal, echo = "json_schema_2020_12_tool", "json_schema_echo"
	for _, t := range sr.Tools {
		if t.NameOnServer != focal {
			continue
		}
		args, err := json.Marshal(map[string]json.RawMessage{"schema": t.ServerInputSchema})
		if err != nil {
			return err
		}
		return call(echo, args)
	}
	return fmt.Errorf("tool %q not found", focal)
}

// withoutNulls returns the arguments object args without its members
// whose value is null ({} for no arguments). A host omits an optional
// argument it has no value for: mcpward checks arguments against the
// tool's schema, where null is no boolean or string, and would refuse the
// call before sending it. Either way no Mcp-Param header is sent for the
// parameter (adapters/mcpsession's TestParamHeaders sends the null itself
// through a session, which checks nothing, and sees none).
func withoutNulls(args json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil || m == nil {
		return json.RawMessage(`{}`)
	}
	for k, v := range m {
		if string(v) == "null" {
			delete(m, k)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}

// describeOrOK is describe(err), or "ok".
func describeOrOK(err error) string {
	if err == nil {
		return "ok"
	}
	return describe(err)
}

// maxSignIns bounds the sign-ins of one run: the first, and step-ups.
const maxSignIns = 3

// asksSignIn reports whether sr failed, or its catalog stopped, because
// the server wants a (new) sign-in.
func asksSignIn(sr composition.ServerStatus) bool {
	return sr.Reason != "" && sr.Class == refusal.AuthRequired &&
		(sr.State == composition.StateFailed || sr.State == composition.StateConnected)
}

// sources is the user-tier definition of the scenario's server (a
// host-trusted tier: it needs no approval).
func sources(serverURL string, cc Context) ([]definition.Source, error) {
	entry := map[string]any{"type": "http", "url": serverURL}
	if cc.ClientID != "" {
		// A pre-registered client: the only reason for an "oauth" key.
		// Every other server signs in from its Bearer challenge alone.
		entry["oauth"] = map[string]any{"clientId": cc.ClientID}
	}
	doc, err := json.Marshal(map[string]any{"mcpServers": map[string]any{serverName: entry}})
	if err != nil {
		return nil, err
	}
	return []definition.Source{{Tier: ports.TierUser, Origin: "conformance.json", Data: doc}}, nil
}

// connect connects the scenario's server alone and returns the fleet and
// its result.
func connect(ctx context.Context, host *composition.Host, srcs []definition.Source) (*composition.Fleet, composition.ServerStatus) {
	// A server's questions are answered with the defaults its form gives
	// (the harness has nobody to ask), as the elicitation scenario
	// expects of a client that declares elicitation.
	fleet := host.Connect(ctx, srcs, &composition.ConnectOptions{Names: []string{serverName},
		Elicitation: &composition.ElicitationOptions{Elicitor: composition.ElicitDefaults()}})
	for _, s := range fleet.Servers() {
		if s.Name == serverName {
			return fleet, s
		}
	}
	return fleet, composition.ServerStatus{Name: serverName, State: composition.StateUnknown}
}

// signIn signs in without a person, as sc.Grant says. For the
// authorization code flow it begins the sign-in (with the pre-registered
// client's secret when the context has one), follows the authorization URL
// itself (the suite's authorization endpoint answers at once with a
// redirect to the callback) and completes the sign-in with that redirect.
func signIn(ctx context.Context, host *composition.Host, srcs []definition.Source, sc Scenario, cc Context, log io.Writer) error {
	if sc.Grant != GrantCode {
		return signInHeadless(ctx, host, srcs, sc, cc, log)
	}
	p, err := signin.BeginWithOptions(ctx, host, srcs, serverName, oauth.SignInOptions{ClientSecret: cc.ClientSecret})
	if err != nil {
		return err
	}
	defer p.Close()
	redirect, err := authorize(ctx, p.URL())
	if err != nil {
		return err
	}
	if err := p.Complete(ctx, redirect); err != nil {
		return err
	}
	fmt.Fprintln(log, "signed in")
	return nil
}

// authorize sends the GET of the authorization URL a browser would and
// returns the Location of its redirect, without following it. Only a
// loopback http(s) authorization endpoint is visited: the suite serves it
// on localhost.
func authorize(ctx context.Context, authURL string) (string, error) {
	u, err := url.Parse(authURL)
	if err != nil || (u.Hostname() != "localhost" && u.Hostname() != "127.0.0.1" && u.Hostname() != "::1") {
		return "", errors.New("the authorization URL is not on loopback")
	}
	c := &http.Client{
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", errors.New("the authorization endpoint cannot be reached")
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	loc := resp.Header.Get("Location")
	if resp.StatusCode < 300 || resp.StatusCode > 399 || loc == "" {
		return "", fmt.Errorf("the authorization endpoint answered %d without a redirect", resp.StatusCode)
	}
	return loc, nil
}
