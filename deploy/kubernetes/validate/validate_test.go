// Package validate checks the Kubernetes manifests of deploy/kubernetes with no cluster and
// no network: every overlay is rendered with kustomize (krusty, in process) and every
// resource is decoded strictly (unknown or misspelt fields fail) into its Kubernetes API
// type. It is a separate module so the executor's own go.mod does not carry the
// Kubernetes and kustomize dependency trees (../shared/STYLE.md: few dependencies); scripts/test.sh
// runs it.
package validate

import (
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// kinds maps apiVersion/kind to a fresh typed object: the kinds the manifests use. A kind
// not listed fails the test (add it here when a manifest needs it).
var kinds = map[string]func() any{
	"v1/Namespace":                  func() any { return &corev1.Namespace{} },
	"v1/Service":                    func() any { return &corev1.Service{} },
	"v1/Secret":                     func() any { return &corev1.Secret{} },
	"v1/Pod":                        func() any { return &corev1.Pod{} },
	"apps/v1/StatefulSet":           func() any { return &appsv1.StatefulSet{} },
	"policy/v1/PodDisruptionBudget": func() any { return &policyv1.PodDisruptionBudget{} },
}

func render(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	out := map[string][]byte{}
	for _, r := range m.Resources() {
		b, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		out[r.GetKind()+"/"+r.GetName()] = b
	}
	return out
}

// TestManifests_StrictDecode renders the base and both overlays and decodes every resource
// strictly into its API type.
func TestManifests_StrictDecode(t *testing.T) {
	for _, dir := range []string{"base", "overlays/dev", "overlays/production"} {
		t.Run(dir, func(t *testing.T) {
			res := render(t, filepath.Join("..", dir))
			if len(res) == 0 {
				t.Fatal("no resources rendered")
			}
			for name, b := range res {
				var meta struct {
					APIVersion string `json:"apiVersion"`
					Kind       string `json:"kind"`
				}
				if err := yaml.Unmarshal(b, &meta); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				mk, ok := kinds[meta.APIVersion+"/"+meta.Kind]
				if !ok {
					t.Errorf("%s: kind %s/%s is not checked (add it to kinds)", name, meta.APIVersion, meta.Kind)
					continue
				}
				if err := yaml.UnmarshalStrict(b, mk()); err != nil {
					t.Errorf("%s: strict decode: %v", name, err)
				}
			}
		})
	}
}

// TestManifests_Shape checks what the deployment relies on, per overlay: the registry is a
// StatefulSet on the headless Service with node id and advertised URL from the pod name,
// probes on /readyz, resource requests, a PDB, and the devbox runs `executor remote`.
func TestManifests_Shape(t *testing.T) {
	want := map[string]int32{"base": 2, "overlays/dev": 2, "overlays/production": 3}
	for dir, replicas := range want {
		t.Run(dir, func(t *testing.T) {
			res := render(t, filepath.Join("..", dir))
			var sts appsv1.StatefulSet
			var headless corev1.Service
			var pod corev1.Pod
			var pdb policyv1.PodDisruptionBudget
			decode := func(key string, v any) {
				b, ok := res[key]
				if !ok {
					t.Fatalf("%s missing", key)
				}
				if err := yaml.UnmarshalStrict(b, v); err != nil {
					t.Fatal(err)
				}
			}
			decode("StatefulSet/registry", &sts)
			decode("Service/registry-nodes", &headless)
			decode("Pod/devbox-1", &pod)
			decode("PodDisruptionBudget/registry", &pdb)
			if sts.Spec.Replicas == nil || *sts.Spec.Replicas != replicas {
				t.Errorf("replicas: got %v, want %d", sts.Spec.Replicas, replicas)
			}
			if sts.Spec.ServiceName != headless.Name || headless.Spec.ClusterIP != corev1.ClusterIPNone {
				t.Errorf("StatefulSet serviceName %q, headless service %q clusterIP %q", sts.Spec.ServiceName, headless.Name, headless.Spec.ClusterIP)
			}
			c := sts.Spec.Template.Spec.Containers[0]
			env := map[string]string{}
			for _, e := range c.Env {
				env[e.Name] = e.Value
			}
			if env["EXECUTOR_REGISTRY_NODE_ID"] != "$(POD_NAME)" || !strings.Contains(env["EXECUTOR_REGISTRY_ADVERTISE_URL"], "$(POD_NAME)."+headless.Name+".") {
				t.Errorf("node id / advertise url: %q / %q", env["EXECUTOR_REGISTRY_NODE_ID"], env["EXECUTOR_REGISTRY_ADVERTISE_URL"])
			}
			for name, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
				if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" {
					t.Errorf("%s probe: want GET /readyz", name)
				}
			}
			if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
				t.Errorf("registry resource requests missing")
			}
			if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
				t.Errorf("PDB maxUnavailable: got %v, want 1", pdb.Spec.MaxUnavailable)
			}
			if args := strings.Join(pod.Spec.Containers[0].Args, " "); !strings.Contains(args, "executor remote") {
				t.Errorf("devbox args: got %q, want executor remote", args)
			}
		})
	}
}
