package composition

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/google/wire"
	"github.com/mcpward/mcpward/adapters/filestore"
	"github.com/mcpward/mcpward/adapters/keychainstore"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// StateDir is the directory a Desktop or Headless deployment keeps its
// state in. Its layout:
//
//	<StateDir>/          0700, created when missing (with its parents)
//	  store/             the filestore directory: approvals.json,
//	                     audit.jsonl, locks/, and tokens/ (Headless only)
//
// Other entries of StateDir belong to the host (the mcpward CLI keeps its
// workspace generations in workspaces/).
type StateDir string

// StoreSubdir is the subdirectory of a StateDir holding the filestore.
const StoreSubdir = "store"

// ReasonStateDirUnusable is the reason of the refusal OpenFileStore
// returns when the state directory cannot be used; its Detail names the
// filestore.DirReason, never the path.
const ReasonStateDirUnusable = "state_dir_unusable"

// Ports are the ports a Custom deployment supplies. Approvals and Audit are
// required; Trust nil means an untrusted workspace of unknown repository
// (see activation.Options); Tokens and Locker may be nil.
type Ports struct {
	Tokens    ports.TokenStore
	Locker    ports.Locker
	Approvals ports.ApprovalStore
	Audit     ports.AuditLog
	Trust     ports.WorkspaceTrust
}

// OpenFileStore opens the filestore in dir's StoreSubdir, creating dir
// (mode 0700) when it is missing, and returns it with the cleanup that
// closes it. A directory the filestore refuses (a symlink, not owned by
// the user, open to group or others) is a *refusal.Error of Class Config
// with ReasonStateDirUnusable, naming neither the path nor the
// operating-system error. It is a Wire provider.
func OpenFileStore(dir StateDir) (*filestore.Store, func(), error) {
	if dir == "" {
		return nil, nil, &refusal.Error{Class: refusal.Config, Reason: ReasonStateDirUnusable, Detail: "no state directory given"}
	}
	if err := os.MkdirAll(string(dir), 0o700); err != nil {
		return nil, nil, &refusal.Error{Class: refusal.Config, Reason: ReasonStateDirUnusable, Detail: "state directory cannot be created"}
	}
	s, err := filestore.Open(filepath.Join(string(dir), StoreSubdir))
	if err != nil {
		detail := "store directory refused"
		var de *filestore.DirError
		if errors.As(err, &de) {
			detail += ": " + string(de.Reason)
		}
		return nil, nil, &refusal.Error{Class: refusal.Config, Reason: ReasonStateDirUnusable, Detail: detail}
	}
	return s, func() { _ = s.Close() }, nil
}

// FileStoreSet provides the filestore as the Locker, ApprovalStore and
// AuditLog of a deployment (the token store is chosen separately).
var FileStoreSet = wire.NewSet(
	OpenFileStore,
	wire.Bind(new(ports.Locker), new(*filestore.Store)),
	wire.Bind(new(ports.ApprovalStore), new(*filestore.Store)),
	wire.Bind(new(ports.AuditLog), new(*filestore.Store)),
)

// AllFilesSet is FileStoreSet with the token store on files too
// (Headless).
var AllFilesSet = wire.NewSet(FileStoreSet, wire.Bind(new(ports.TokenStore), new(*filestore.Store)))

// KeychainTokensSet keeps tokens in the OS keychain (Desktop). The
// keychain is not contacted until a token is read or written.
var KeychainTokensSet = wire.NewSet(
	keychainstore.New,
	wire.Bind(new(ports.TokenStore), new(*keychainstore.Store)),
)

// ConnectSet builds what connecting needs from the Config: the
// Authentication (shared by the Host and the Dialer), the HTTP transport
// factory behind the egress policy, the stdio launcher under the process
// authority, and the Dialer over them.
var ConnectSet = wire.NewSet(NewAuthentication, NewOAuth, NewHTTPFactory, NewLauncher, NewDialer)

// HostSet builds the Decider, the connecting parts (ConnectSet) and the
// Host from the ports in the graph.
var HostSet = wire.NewSet(NewDecider, ConnectSet, NewHost)
