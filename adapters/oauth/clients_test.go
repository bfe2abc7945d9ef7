package oauth

import (
	"context"
	"encoding/json"
)

// seedClient stores cr as a client registration, as a former sign-in
// would have.
func seedClient(e *testEnv, cr *clientRecord) {
	cr.Version = clientRecordVersion
	b, err := json.Marshal(cr)
	if err != nil {
		panic(err)
	}
	if err := e.store.Set(context.Background(), clientKey(cr.Server, cr.Resource, cr.Issuer), b); err != nil {
		panic(err)
	}
}
