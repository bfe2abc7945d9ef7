package definition_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/ports"
	"github.com/stretchr/testify/require"
)

// The canaries: unique values planted wherever a secret can hide. None may
// appear in any output, error string or formatted value of the whole
// definitions flow.
var pipelineCanaries = map[string]string{
	"variable":          "CANARYvar7f3a",
	"variable default":  "CANARYdef91bc",
	"env literal":       "CANARYenv22d0",
	"header literal":    "CANARYhdr5e61",
	"header template":   "CANARYtpl0c4d",
	"url query":         "CANARYqry8a1f",
	"url userinfo":      "CANARYusr3b7e",
	"ghp literal arg":   "ghp_CANARYabcdefghijklmnopqrstuvwxyz0123",
	"flag literal arg":  "CANARYflg64c2",
	"malformed entry":   "CANARYbad0e9a",
	"refused secret":    "CANARYcls7d21",
	"shell helper line": "CANARYsh4f0b9",

	// Issue 11: secrets by position, whatever the variable is called, and
	// literal shapes the masking used to miss.
	"plain var after flag":    "CANARYpvf8c31",
	"plain var in auth token": "CANARYpva5d72",
	"plain var after bearer":  "CNRYb7", // shorter than the 8 bytes the Bearer shape rule needs
	"plain var in assignment": "CANARYpve6a09",
	"literal after flag":      "CANARYlaf2b68",
	"literal after helper":    "CANARYlah7a15",
	"stripe restricted key":   "rk_live_CANARYrk9f2a1b",
	"npm token":               "npm_CANARYnpm0123456789abcdefghijklmnopq",
	"npm auth line literal":   "CANARYnal3c5e",
	"slack webhook path":      "B00000000/CANARYslk4e2b9c",
	"gitlab token":            "glpat-CANARYglp6d4e1a2b3c4d",
}

// pipelineLookupCanaries are the canaries the lookup supplies rather than
// the documents.
var pipelineLookupCanaries = map[string]bool{
	"variable": true, "plain var after flag": true, "plain var in auth token": true, "plain var after bearer": true,
	"plain var in assignment": true,
}

func pipelineCanaryDocs() []definition.Source {
	c := pipelineCanaries
	project := fmt.Sprintf(`{"mcpServers":{
	  "stdio-ok": {"command":"node","args":["server.js","%[8]s","--api-key=%[9]s","--user=${GITHUB_TOKEN}"],
	    "env":{"API_KEY":"%[3]s","DB_PASSWORD":"${DB_PASSWORD:-%[2]s}","PLAIN":"x"}},
	  "http-ok": {"type":"http","url":"https://user:%[7]s@mcp.example.com/v1?token=%[6]s&x=1",
	    "headers":{"Authorization":"Bearer %[4]s","X-Api-Key":"${SERVICE_TOKEN}","X-Trace":"%[5]s"}},
	  "http-missing": {"type":"http","url":"https://mcp.example.com/${NOT_SET}","headers":{"Cookie":"%[4]s"}},
	  "bad-template": {"command":"node","args":["${DB_PASSWORD:-%[3]s","x"],"env":{"TOKEN":"%[3]s"}},
	  "malformed": {"command":"node","env":{"TOKEN":"%[10]s"},"shell":"%[10]s"},
	  "secret-client": {"type":"http","url":"https://o.example.com/mcp","oauth":{"clientId":"cid","clientSecret":"%[11]s"}},
	  "shell-helper": {"type":"http","url":"https://h.example.com/mcp","headersHelper":"get-token --secret %[12]s"},
	  "wrong-type": {"command":"node","args":"%[10]s"}
	}}`, nil, c["variable default"], c["env literal"], c["header literal"], c["header template"],
		c["url query"], c["url userinfo"], c["ghp literal arg"], c["flag literal arg"],
		c["malformed entry"], c["refused secret"], c["shell helper line"])
	// Plain-named variables (STRIPE, NPMVAL, PLAINB, DOCKVAL) in credential
	// positions; literal credentials after flags and of the shapes issue 11
	// found unmasked.
	positional := fmt.Sprintf(`,
	  "stdio-pos": {"command":"node","args":["server.js","--api-key","${STRIPE}","--token","%[1]s",
	    "--password","pre-${STRIPE}-post","//registry.npmjs.org/:_authToken=${NPMVAL}","//r.example/:_authToken=%[2]s",
	    "--header","Authorization: Bearer ${PLAINB}","-e","API_KEY=${DOCKVAL}","%[3]s","%[4]s","%[5]s"]},
	  "http-pos": {"type":"http","url":"https://hooks.slack.com/services/T00000000/%[6]s",
	    "headersHelper":["/bin/get-token","--client-secret","%[7]s"]}`,
		c["literal after flag"], c["npm auth line literal"], c["stripe restricted key"], c["npm token"],
		c["gitlab token"], c["slack webhook path"], c["literal after helper"])
	project = project[:strings.LastIndex(project, "}\n\t}}")+1] + positional + "\n\t}}"
	managedBroken := `{"mcpServers": {"x": {"command": "` + c["malformed entry"] + `"` // not JSON
	user := `{"mcpServers":{"user-srv":{"command":"tool","env":{"SESSION_ID":"` + c["env literal"] + `"}}},"disabledMcpServers":["stdio-ok"]}`
	return []definition.Source{
		{Tier: ports.TierProject, Origin: "project.json", Data: []byte(project)},
		{Tier: ports.TierUser, Origin: "user.json", Data: []byte(user)},
		{Tier: ports.TierPlugin, Origin: "plugin.json", Data: []byte(managedBroken)},
	}
}

func pipelineCanaryLookup(name string) (string, bool) {
	switch name {
	case "GITHUB_TOKEN", "SERVICE_TOKEN":
		return pipelineCanaries["variable"], true
	case "STRIPE":
		return pipelineCanaries["plain var after flag"], true
	case "NPMVAL":
		return pipelineCanaries["plain var in auth token"], true
	case "PLAINB":
		return pipelineCanaries["plain var after bearer"], true
	case "DOCKVAL":
		return pipelineCanaries["plain var in assignment"], true
	}
	return "", false
}

// TestCanaryWholePipeline plants canaries in env, headers, URL query and
// userinfo, variables and defaults, malformed and refused entries, then runs
// decode, resolve, materialize, fingerprint, project and every error path,
// and asserts no canary appears in any output, error string or %v/%+v/%#v/JSON
// rendering of any returned value.
func TestCanaryWholePipeline(t *testing.T) {
	var outputs []string
	add := func(label string, v any) {
		js, _ := json.Marshal(v)
		outputs = append(outputs,
			label+" %v "+fmt.Sprintf("%v", v),
			label+" %+v "+fmt.Sprintf("%+v", v),
			label+" %#v "+fmt.Sprintf("%#v", v),
			label+" %s "+fmt.Sprintf("%s", v),
			label+" json "+string(js))
	}

	var docs []definition.Document
	for _, src := range pipelineCanaryDocs() {
		d := definition.Decode(src)
		docs = append(docs, d)
		add("document", d)
		for _, e := range d.Entries {
			add("entry", e)
			if e.Def != nil {
				add("definition", e.Def)
				add("definition value", *e.Def)
				add("projectDefinition", definition.ProjectDefinition(e.Def))
			}
		}
	}
	res := definition.Resolve(docs)
	add("resolution", res)
	states := map[string]definition.State{}
	for _, s := range res.Servers {
		states[s.Name] = s.State
		add("server", s)
		if s.Def == nil {
			continue
		}
		m, err := definition.Materialize(s.Def, pipelineCanaryLookup)
		if err != nil {
			outputs = append(outputs, "error "+err.Error(), fmt.Sprintf("error %+v", err), fmt.Sprintf("error %#v", err))
			add("error value", err)
			continue
		}
		add("materialized", m)
		add("materialized value", *m)
		add("projection", definition.Project(m))
		outputs = append(outputs, "endpoint "+definition.Endpoint(m), "fingerprint "+definition.Fingerprint(m))
	}

	// The scenario must really reach every path it claims to.
	require.Equal(t, definition.StateDisabled, states["stdio-ok"], "the user overlay disables a project server")
	require.Equal(t, definition.StateResolved, states["http-ok"])
	require.Equal(t, definition.StateResolved, states["http-missing"])
	require.Equal(t, definition.StateResolved, states["bad-template"])
	require.Equal(t, definition.StateUnresolved, states["malformed"])
	require.Equal(t, definition.StateUnresolved, states["wrong-type"])
	require.Equal(t, definition.StateRefused, states["secret-client"])
	require.Equal(t, definition.StateRefused, states["shell-helper"])
	require.Equal(t, definition.StateResolved, states["user-srv"])
	require.Equal(t, definition.StateResolved, states["stdio-pos"])
	require.Equal(t, definition.StateResolved, states["http-pos"])
	require.NotEmpty(t, res.Problems, "the broken plugin document must be reported")

	joined := strings.Join(outputs, "\n")
	require.Contains(t, joined, "unset_variable", "the missing-variable error path must run")
	require.Contains(t, joined, "invalid_template", "the invalid-template error path must run")
	for label, canary := range pipelineCanaries {
		if strings.Contains(joined, canary) {
			for _, line := range outputs {
				if i := strings.Index(line, canary); i >= 0 {
					t.Errorf("canary %q leaked into the outputs: %s", label, line[:strings.IndexByte(line, ' ')+1])
					break
				}
			}
		}
	}
	// Sanity: the canaries are planted in the input, so the check can fail.
	var input strings.Builder
	for _, s := range pipelineCanaryDocs() {
		input.Write(s.Data)
	}
	for label, canary := range pipelineCanaries {
		if pipelineLookupCanaries[label] {
			continue // supplied by the lookup, not the documents
		}
		require.True(t, strings.Contains(input.String(), canary), "canary %q not planted", label)
	}
}
