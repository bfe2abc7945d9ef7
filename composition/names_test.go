package composition

import (
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/activation"
	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/supervisor"
	"github.com/mcpward/mcpward/ports"
)

// reExportTypes are names.go's type aliases with their origins, and the
// former names #27 renamed (deprecated aliases) with their new names.
var reExportTypes = map[string][2]reflect.Type{
	"Source":          {reflect.TypeFor[Source](), reflect.TypeFor[definition.Source]()},
	"Tier":            {reflect.TypeFor[Tier](), reflect.TypeFor[ports.Tier]()},
	"Tool":            {reflect.TypeFor[Tool](), reflect.TypeFor[ports.Tool]()},
	"ToolSpec":        {reflect.TypeFor[ToolSpec](), reflect.TypeFor[ports.ToolSpec]()},
	"ToolAnnotations": {reflect.TypeFor[ToolAnnotations](), reflect.TypeFor[ports.ToolAnnotations]()},
	"ToolResult":      {reflect.TypeFor[ToolResult](), reflect.TypeFor[ports.ToolResult]()},
	"ContentBlock":    {reflect.TypeFor[ContentBlock](), reflect.TypeFor[ports.ContentBlock]()},
	"ContentKind":     {reflect.TypeFor[ContentKind](), reflect.TypeFor[ports.ContentKind]()},
	"Progress":        {reflect.TypeFor[Progress](), reflect.TypeFor[ports.Progress]()},
	"Elicitor":        {reflect.TypeFor[Elicitor](), reflect.TypeFor[ports.Elicitor]()},
	"ElicitorFunc":    {reflect.TypeFor[ElicitorFunc](), reflect.TypeFor[ports.ElicitorFunc]()},
	"ElicitRequest":   {reflect.TypeFor[ElicitRequest](), reflect.TypeFor[ports.ElicitRequest]()},
	"ElicitResult":    {reflect.TypeFor[ElicitResult](), reflect.TypeFor[ports.ElicitResult]()},
	"ElicitAction":    {reflect.TypeFor[ElicitAction](), reflect.TypeFor[ports.ElicitAction]()},
	"WorkspaceTrust":  {reflect.TypeFor[WorkspaceTrust](), reflect.TypeFor[ports.WorkspaceTrust]()},
	"WorkspaceFacts":  {reflect.TypeFor[WorkspaceFacts](), reflect.TypeFor[ports.WorkspaceFacts]()},
	"Error":           {reflect.TypeFor[Error](), reflect.TypeFor[refusal.Error]()},
	"Class":           {reflect.TypeFor[Class](), reflect.TypeFor[refusal.Class]()},
	// Deprecated aliases of #27's renames.
	"ToolInfo":     {reflect.TypeFor[ToolInfo](), reflect.TypeFor[ToolSummary]()},
	"ServerResult": {reflect.TypeFor[ServerResult](), reflect.TypeFor[ServerStatus]()},
	"Result":       {reflect.TypeFor[Result](), reflect.TypeFor[ServerEvaluation]()},
}

// reExportValues are names.go's constants with their origins, and the
// reasons composition re-exports elsewhere.
var reExportValues = map[string][2]any{
	"TierManaged":              {TierManaged, ports.TierManaged},
	"TierLocal":                {TierLocal, ports.TierLocal},
	"TierProject":              {TierProject, ports.TierProject},
	"TierUser":                 {TierUser, ports.TierUser},
	"TierPlugin":               {TierPlugin, ports.TierPlugin},
	"ContentText":              {ContentText, ports.ContentText},
	"ContentImage":             {ContentImage, ports.ContentImage},
	"ContentAudio":             {ContentAudio, ports.ContentAudio},
	"ContentResourceLink":      {ContentResourceLink, ports.ContentResourceLink},
	"ContentResource":          {ContentResource, ports.ContentResource},
	"ElicitActionAccept":       {ElicitActionAccept, ports.ElicitAccept},
	"ElicitActionDecline":      {ElicitActionDecline, ports.ElicitDecline},
	"ElicitActionCancel":       {ElicitActionCancel, ports.ElicitCancel},
	"ClassInternal":            {ClassInternal, refusal.Internal},
	"ClassTransient":           {ClassTransient, refusal.Transient},
	"ClassAuthRequired":        {ClassAuthRequired, refusal.AuthRequired},
	"ClassAuthRefused":         {ClassAuthRefused, refusal.AuthRefused},
	"ClassRefused":             {ClassRefused, refusal.Refused},
	"ClassUnsupported":         {ClassUnsupported, refusal.Unsupported},
	"ClassProtocol":            {ClassProtocol, refusal.Protocol},
	"ClassConfig":              {ClassConfig, refusal.Config},
	"ClassNone":                {ClassNone, refusal.None},
	"ReasonNotApproved":        {ReasonNotApproved, activation.ReasonNotApproved},
	"ReasonApprovalChanged":    {ReasonApprovalChanged, activation.ReasonIdentityChanged},
	"ReasonWorkspaceUntrusted": {ReasonWorkspaceUntrusted, activation.ReasonWorkspaceUntrusted},
	"ReasonRepositoryUnknown":  {ReasonRepositoryUnknown, activation.ReasonRepositoryUnknown},
	"ReasonApprovalNotNeeded":  {ReasonApprovalNotNeeded, activation.ReasonApprovalNotNeeded},
	"ReasonUnsetVariable":      {ReasonUnsetVariable, definition.ReasonUnsetVariable},
	"ReasonInvalidArguments":   {ReasonInvalidArguments, catalog.ReasonInvalidArguments},
	"ReasonToolChanged":        {ReasonToolChanged, catalog.ReasonToolChanged},
	"ReasonToolRemoved":        {ReasonToolRemoved, catalog.ReasonToolRemoved},
	"ReasonCallTimeout":        {ReasonCallTimeout, supervisor.ReasonCallTimeout},
	"ReasonUnknownTool":        {ReasonUnknownTool, catalog.ReasonUnknownTool},
	"ReasonServerUnavailable":  {ReasonServerUnavailable, supervisor.ReasonServerUnavailable},
}

// reExportFuncs are names.go's functions: each is checked to do what its
// origin does in TestReExports.
var reExportFuncs = []string{"ToolName", "WithProgress", "ClassOf", "ReasonOf"}

// TestReExports: every name names.go declares is the same type or value
// as its origin (an alias, not a copy), or a function doing what its
// origin does; so are the deprecated aliases of #27's renames (ToolInfo,
// ServerResult, Result). The tables cover every name names.go declares:
// adding one there without a check here, or removing one, fails.
func TestReExports(t *testing.T) {
	for name, ty := range reExportTypes {
		assert.Equal(t, ty[1], ty[0], "%s is %s", name, ty[1])
	}
	for name, v := range reExportValues {
		// Equal compares the types too: a constant of another type fails.
		assert.Equal(t, v[1], v[0], name)
	}

	assert.Equal(t, catalog.ToolName("srv", "t"), ToolName("srv", "t"))
	var got Progress
	fn := ports.ProgressFunc(WithProgress(context.Background(), func(p Progress) { got = p }))
	require.NotNil(t, fn, "ports.ProgressFunc finds what WithProgress put")
	fn(ports.Progress{Progress: 3})
	assert.Equal(t, 3.0, got.Progress)
	for _, err := range []error{nil, refusal.New(refusal.Transient, "call_timeout", "s"), context.Canceled} {
		assert.Equal(t, refusal.ClassOf(err), ClassOf(err))
		assert.Equal(t, refusal.ReasonOf(err), ReasonOf(err))
	}

	// Every name names.go declares is in a table above.
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "names.go", nil, 0)
	require.NoError(t, err)
	var declared, checked []string
	for _, d := range file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			declared = append(declared, d.Name.Name)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					declared = append(declared, s.Name.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						declared = append(declared, n.Name)
					}
				}
			}
		}
	}
	for _, n := range declared {
		_, isType := reExportTypes[n]
		_, isValue := reExportValues[n]
		if isType || isValue || contains(reExportFuncs, n) {
			checked = append(checked, n)
		}
	}
	sort.Strings(declared)
	sort.Strings(checked)
	assert.Equal(t, declared, checked, "a name of names.go without a check in TestReExports")
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestDeprecatedFleetNames: the deprecated Fleet.Call and Fleet.CallTool
// do what CallServerTool and CallHostTool do, success and refusal alike,
// and ToolSummary's deprecated ServerTool field holds NameOnServer.
func TestDeprecatedFleetNames(t *testing.T) {
	c := newLiveConnector()
	c.set("a", tool("t", "string"))
	r := newRig(t, Config{})
	f := r.host.Connect(context.Background(), liveSrcs("a"), &ConnectOptions{connector: c})
	defer f.Close()
	ctx := context.Background()

	var call func(*Fleet, context.Context, string, string, json.RawMessage) (ports.ToolResult, error) = (*Fleet).Call
	var callTool func(*Fleet, context.Context, string, json.RawMessage) (ports.ToolResult, error) = (*Fleet).CallTool
	for _, tc := range []struct{ server, tool string }{{"a", "t"}, {"a", "nope"}, {"gone", "t"}} {
		want, wantErr := f.CallServerTool(ctx, tc.server, tc.tool, nil)
		got, gotErr := call(f, ctx, tc.server, tc.tool, nil)
		assert.Equal(t, want, got, "Call %s/%s", tc.server, tc.tool)
		assert.Equal(t, wantErr, gotErr, "Call %s/%s", tc.server, tc.tool)

		want, wantErr = f.CallHostTool(ctx, ToolName(tc.server, tc.tool), nil)
		got, gotErr = callTool(f, ctx, ToolName(tc.server, tc.tool), nil)
		assert.Equal(t, want, got, "CallTool %s/%s", tc.server, tc.tool)
		assert.Equal(t, wantErr, gotErr, "CallTool %s/%s", tc.server, tc.tool)
	}

	s := f.Servers()
	require.Len(t, s, 1)
	require.NotEmpty(t, s[0].Tools)
	for _, ts := range s[0].Tools {
		assert.Equal(t, ts.NameOnServer, ts.ServerTool)
	}
}
