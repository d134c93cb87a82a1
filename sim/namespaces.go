package sim

import (
	"encoding/json"
	"fmt"

	"github.com/cachelab/cachelab/fakeapi"
)

// SystemNamespaces are the Namespaces kube-apiserver creates at start-up
// (its system namespaces controller), in the order it creates them:
// SubjectInfo.SystemNamespaces starts a run with them.
var SystemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// createSystemNamespaces creates the SystemNamespaces the plan's own
// objects do not create, with the setup client.
func (r *run) createSystemNamespaces(setup *fakeapi.Client) error {
	planned := map[string]bool{}
	for _, raw := range r.plan.Objects {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if json.Unmarshal(raw, &head) == nil && head.APIVersion == "v1" && head.Kind == "Namespace" {
			planned[head.Metadata.Name] = true
		}
	}
	for _, ns := range SystemNamespaces {
		if planned[ns] {
			continue
		}
		raw := json.RawMessage(fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, ns))
		if err := r.createObject(setup, raw); err != nil {
			return fmt.Errorf("sim: the system namespace %s: %w", ns, err)
		}
	}
	return nil
}
