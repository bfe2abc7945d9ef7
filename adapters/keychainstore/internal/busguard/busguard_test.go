//go:build linux

package busguard

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func perUserBus() bool {
	for _, f := range []string{"bus", "dbus-session"} {
		if _, err := os.Stat(fmt.Sprintf("/run/user/%d/%s", os.Getuid(), f)); !os.IsNotExist(err) {
			return true
		}
	}
	return false
}

func TestGuard(t *testing.T) {
	tests := []struct {
		name    string
		value   *string // nil: unset
		wantSet bool
		wantEnv string
	}{
		{name: "address given", value: ptr("unix:path=/run/bus"), wantEnv: "unix:path=/run/bus"},
		{name: "explicit autolaunch kept", value: ptr("autolaunch:"), wantEnv: "autolaunch:"},
		{name: "unset", value: nil, wantSet: !perUserBus(), wantEnv: map[bool]string{true: "", false: Disabled}[perUserBus()]},
		{name: "empty", value: ptr(""), wantSet: !perUserBus(), wantEnv: map[bool]string{true: "", false: Disabled}[perUserBus()]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(envAddr, "") // restores the original afterwards
			if tt.value == nil {
				require.NoError(t, os.Unsetenv(envAddr))
			} else {
				t.Setenv(envAddr, *tt.value)
			}
			assert.Equal(t, tt.wantSet, guard())
			assert.Equal(t, tt.wantEnv, os.Getenv(envAddr))
		})
	}
}

func TestRestore(t *testing.T) {
	saved := set
	t.Cleanup(func() { set = saved })
	tests := []struct {
		name     string
		set      bool
		value    string
		wantDone bool
		wantEnv  string
	}{
		{name: "guard set it", set: true, value: Disabled, wantDone: true, wantEnv: ""},
		{name: "guard did not set it", set: false, value: Disabled, wantEnv: Disabled},
		{name: "changed since", set: true, value: "unix:path=/x", wantEnv: "unix:path=/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(envAddr, tt.value)
			set = tt.set
			assert.Equal(t, tt.wantDone, Restore())
			got, _ := os.LookupEnv(envAddr)
			assert.Equal(t, tt.wantEnv, got)
			assert.False(t, Restore(), "Restore acts once")
		})
	}
}

func TestItoa(t *testing.T) {
	for _, n := range []int{0, 1, 9, 10, 1000, 65534, 4294967294, -1, -42} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			assert.Equal(t, strconv.Itoa(n), itoa(n))
		})
	}
}

func ptr(s string) *string { return &s }
