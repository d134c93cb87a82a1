package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunRefusesBadFlagsAndKubeconfigsWithWhatToDo(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("KUBECONFIG", filepath.Join(dir, "nowhere"))
	t.Setenv("HOME", dir)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--workers", "0"}, exitUsage, "--workers=0: want at least 1"},
		{[]string{"--bogus"}, exitUsage, "flag provided but not defined: -bogus"},
		{[]string{"extra"}, exitUsage, `takes no arguments, got ["extra"]`},
		{[]string{"--kubeconfig", filepath.Join(dir, "missing")}, exitUsage, "loading the kubeconfig (" + filepath.Join(dir, "missing") + ")"},
		{nil, exitUsage, "give --kubeconfig FILE"},
		{[]string{"--help"}, exitOK, "Usage: bellerophon"},
	} {
		var stderr bytes.Buffer
		code := run(context.Background(), tc.args, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("bellerophon %v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}
