package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/reversi-cloud/reversi/cli"
	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/azure"
)

// commands are the programs under cmd/, by name, as the image installs them
// in /usr/local/bin.
var commands = map[string]func(cli.Env) int{
	"bench":     cli.Bench,
	"enumerate": cli.Enumerate,
	"seed":      cli.Seed,
	"worker":    cli.Worker,
	"inspect":   cli.Inspect,
	"solve":     cli.Solve,
}

const binDir = "/usr/local/bin/"

// The parts of Kubernetes and KEDA objects the tests look at.
type object struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name        string            `yaml:"name"`
		Annotations map[string]string `yaml:"annotations"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec yaml.Node         `yaml:"spec"`
	file string
}

type container struct {
	Name    string   `yaml:"name"`
	Image   string   `yaml:"image"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []struct {
		Name string `yaml:"name"`
	} `yaml:"env"`
	EnvFrom []struct {
		ConfigMapRef *struct {
			Name string `yaml:"name"`
		} `yaml:"configMapRef"`
		SecretRef *struct {
			Name     string `yaml:"name"`
			Optional bool   `yaml:"optional"`
		} `yaml:"secretRef"`
	} `yaml:"envFrom"`
	Ports     []containerPort `yaml:"ports"`
	Resources struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	SecurityContext struct {
		AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
	} `yaml:"securityContext"`
}

type containerPort struct {
	Name          string `yaml:"name"`
	ContainerPort int    `yaml:"containerPort"`
}

// workload is the spec of a Deployment or a Job.
type workload struct {
	Template struct {
		Metadata struct {
			Labels map[string]string `yaml:"labels"`
		} `yaml:"metadata"`
		Spec struct {
			ServiceAccountName            string `yaml:"serviceAccountName"`
			TerminationGracePeriodSeconds *int   `yaml:"terminationGracePeriodSeconds"`
			SecurityContext               struct {
				RunAsNonRoot *bool `yaml:"runAsNonRoot"`
				RunAsUser    *int  `yaml:"runAsUser"`
			} `yaml:"securityContext"`
			Containers []container `yaml:"containers"`
		} `yaml:"spec"`
	} `yaml:"template"`
}

type scaledObject struct {
	ScaleTargetRef struct {
		Name string `yaml:"name"`
	} `yaml:"scaleTargetRef"`
	Triggers []struct {
		Type              string            `yaml:"type"`
		Metadata          map[string]string `yaml:"metadata"`
		AuthenticationRef struct {
			Name string `yaml:"name"`
		} `yaml:"authenticationRef"`
	} `yaml:"triggers"`
}

type triggerAuth struct {
	PodIdentity *struct {
		Provider string `yaml:"provider"`
	} `yaml:"podIdentity"`
	SecretTargetRef []struct {
		Parameter string `yaml:"parameter"`
		Name      string `yaml:"name"`
		Key       string `yaml:"key"`
	} `yaml:"secretTargetRef"`
}

// manifests reads every document of every YAML file in this directory
// except kustomization.yaml.
func manifests(t *testing.T) []object {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var objs []object
	for _, f := range files {
		if f == "kustomization.yaml" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for i := 0; ; i++ {
			var o object
			err := dec.Decode(&o)
			if err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				t.Fatalf("%s: document %d: %v", f, i, err)
			}
			o.file = f
			objs = append(objs, o)
		}
	}
	return objs
}

func decodeSpec(t *testing.T, o object, v any) {
	t.Helper()
	if err := o.Spec.Decode(v); err != nil {
		t.Fatalf("%s: %s %s: spec: %v", o.file, o.Kind, o.Metadata.Name, err)
	}
}

func byKind(objs []object, kind string) []object {
	var out []object
	for _, o := range objs {
		if o.Kind == kind {
			out = append(out, o)
		}
	}
	return out
}

func TestEveryManifestParsesAndIsNamed(t *testing.T) {
	objs := manifests(t)
	if len(objs) == 0 {
		t.Fatal("no manifests")
	}
	seen := map[string]string{}
	for _, o := range objs {
		id := o.Kind + "/" + o.Metadata.Name
		if o.APIVersion == "" || o.Kind == "" || o.Metadata.Name == "" {
			t.Errorf("%s: a document without apiVersion, kind or metadata.name (%q)", o.file, id)
		}
		if prev, ok := seen[id]; ok {
			t.Errorf("%s: %s is also defined in %s", o.file, id, prev)
		}
		seen[id] = o.file
	}
	for _, want := range []string{"Deployment", "Job", "ScaledObject", "TriggerAuthentication", "ServiceAccount", "ConfigMap"} {
		if len(byKind(objs, want)) == 0 {
			t.Errorf("no %s in deploy/", want)
		}
	}
}

func TestKustomizationListsEveryManifest(t *testing.T) {
	var k struct {
		Resources []string `yaml:"resources"`
	}
	b, err := os.ReadFile("kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	files, _ := filepath.Glob("*.yaml")
	files = slices.DeleteFunc(files, func(f string) bool { return f == "kustomization.yaml" })
	got := slices.Clone(k.Resources)
	sort.Strings(got)
	sort.Strings(files)
	if !slices.Equal(got, files) {
		t.Errorf("kustomization.yaml resources %v, want every manifest file %v", got, files)
	}
}

// checkFinishesTasks wants the workers of a Deployment, which a scale-in
// stops whether busy or not, to finish the task in hand when stopped
// (-finish-within) and the pod's grace period to outlast that, with a
// minute to spare for giving the message back after it: a merge given
// back at the tail of a stage is a merge done twice.
func checkFinishesTasks(t *testing.T, where string, args []string, grace *int) {
	t.Helper()
	within, err := time.ParseDuration(flagValue(args, "-finish-within"))
	if err != nil || within < 10*time.Minute {
		t.Errorf("%s: -finish-within %q: want the worker to finish its task in hand for at least 10m (a deep ply's merge)", where, flagValue(args, "-finish-within"))
		return
	}
	if grace == nil || time.Duration(*grace)*time.Second < within+time.Minute {
		got := "left out (30)"
		if grace != nil {
			got = strconv.Itoa(*grace)
		}
		t.Errorf("%s: terminationGracePeriodSeconds %s: want at least -finish-within (%v) and a minute", where, got, within)
	}
}

// runOf returns the value of -run in args, or "".
func runOf(args []string) string {
	for i, a := range args {
		if (a == "-run" || a == "--run") && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, "-run="); ok {
			return v
		}
	}
	return ""
}

// commandName maps an entrypoint such as /usr/local/bin/worker to its
// command, failing if cmd/ has no such program.
func commandName(t *testing.T, where, path string) string {
	t.Helper()
	name, ok := strings.CutPrefix(path, binDir)
	if !ok || commands[name] == nil {
		t.Errorf("%s: entrypoint %q is not %s<one of %v>", where, path, binDir, slices.Sorted(maps.Keys(commands)))
		return ""
	}
	return name
}

// checkAccepts runs a command's real flag parsing and validation on args.
// enumerate, bench and solve get -h appended (they run locally by default, so
// they would run), and so does any command given -data or -storage
// embedded; seed, worker and inspect otherwise run with an empty
// environment, so they must get through every check and stop at the
// missing storage settings.
func checkAccepts(t *testing.T, where, name string, args []string) {
	t.Helper()
	for _, a := range args {
		if strings.Contains(a, "$") {
			t.Errorf("%s: %s argument %q holds an unexpanded variable", where, name, a)
			return
		}
	}
	var out, errb bytes.Buffer
	env := cli.Env{Getenv: func(string) string { return "" }, Stdout: &out, Stderr: &errb}
	// Commands that need no storage settings would run for real: check
	// only that their flags parse.
	embedded := slices.Contains(args, "-storage=embedded") || slices.Index(args, "-storage") >= 0 &&
		slices.Index(args, "-storage")+1 < len(args) && args[slices.Index(args, "-storage")+1] == "embedded" ||
		slices.ContainsFunc(args, func(a string) bool { return a == "-data" || strings.HasPrefix(a, "-data=") })
	if name == "enumerate" || name == "bench" || name == "solve" || embedded {
		env.Args = append(slices.Clone(args), "-h")
		if name == "solve" {
			// solve's flags take no values; -h goes before its files,
			// where flag parsing still reads it.
			at := slices.IndexFunc(args, func(a string) bool { return !strings.HasPrefix(a, "-") })
			if at < 0 {
				at = len(args)
			}
			env.Args = slices.Concat(args[:at], []string{"-h"}, args[at:])
		}
		if code := commands[name](env); code != cli.ExitOK {
			t.Errorf("%s: %s %v: flags refused (exit %d): %s", where, name, args, code, errb.String())
		}
		return
	}
	env.Args = args
	code := commands[name](env)
	if code != cli.ExitFail || !strings.Contains(errb.String(), "set "+azure.EnvConnectionString) {
		t.Errorf("%s: %s %v: exit %d, %q; want the flags accepted and exit %d for lack of storage settings",
			where, name, args, code, strings.TrimSpace(errb.String()), cli.ExitFail)
	}
}

func TestCommandsAreTheProgramsUnderCmd(t *testing.T) {
	dirs, err := os.ReadDir("../cmd")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range dirs {
		if d.IsDir() {
			names = append(names, d.Name())
		}
	}
	if got, want := slices.Sorted(maps.Keys(commands)), names; !slices.Equal(got, want) {
		t.Errorf("the tests know commands %v; cmd/ has %v", got, want)
	}
}

func TestManifestsMatchTheCode(t *testing.T) {
	objs := manifests(t)
	configMaps := map[string]map[string]string{}
	for _, o := range byKind(objs, "ConfigMap") {
		configMaps[o.Metadata.Name] = o.Data
	}
	serviceAccounts := map[string]object{}
	for _, o := range byKind(objs, "ServiceAccount") {
		serviceAccounts[o.Metadata.Name] = o
	}

	runs := map[string]bool{}
	deployments := map[string]workload{}
	secrets := map[string]bool{} // secrets the pods read their environment from
	var accounts []string
	var envNames []string
	// Each pod's envFrom, spelled out: every pod must see the same storage
	// accounts in the same order, or they place a run's blobs differently.
	storageFrom := map[string]string{}
	for _, o := range append(byKind(objs, "Deployment"), byKind(objs, "Job")...) {
		where := o.file + ": " + o.Kind + " " + o.Metadata.Name
		var w workload
		decodeSpec(t, o, &w)
		if o.Kind == "Deployment" {
			deployments[o.Metadata.Name] = w
		}
		ps := w.Template.Spec
		if ps.SecurityContext.RunAsNonRoot == nil || !*ps.SecurityContext.RunAsNonRoot || ps.SecurityContext.RunAsUser == nil || *ps.SecurityContext.RunAsUser == 0 {
			t.Errorf("%s: the pod must set runAsNonRoot: true and a non-zero runAsUser", where)
		}
		sa, ok := serviceAccounts[ps.ServiceAccountName]
		if !ok {
			t.Errorf("%s: service account %q is not defined in deploy/", where, ps.ServiceAccountName)
		} else if sa.Metadata.Annotations["azure.workload.identity/client-id"] == "" || w.Template.Metadata.Labels["azure.workload.identity/use"] != "true" {
			t.Errorf("%s: workload identity needs the service account's azure.workload.identity/client-id annotation and the pod label azure.workload.identity/use: \"true\"", where)
		}
		if len(ps.Containers) != 1 {
			t.Fatalf("%s: %d containers, want 1", where, len(ps.Containers))
		}
		c := ps.Containers[0]
		if len(c.Command) != 1 {
			t.Errorf("%s: command %v: want the one program, flags in args", where, c.Command)
			continue
		}
		name := commandName(t, where, c.Command[0])
		if name == "" {
			continue
		}
		checkAccepts(t, where, name, c.Args)
		run := runOf(c.Args)
		runs[run] = true
		if o.Kind == "Deployment" && name != "worker" || o.Kind == "Job" && name != "seed" {
			t.Errorf("%s runs %s", where, name)
		}
		if o.Kind == "Deployment" {
			checkFinishesTasks(t, where, c.Args, ps.TerminationGracePeriodSeconds)
		}
		if c.Resources.Requests["cpu"] == "" || c.Resources.Requests["memory"] == "" || c.Resources.Limits["memory"] == "" {
			t.Errorf("%s: set cpu and memory requests and a memory limit", where)
		}
		if addr := flagValue(c.Args, "-metrics-addr"); addr != "" {
			_, num, _ := strings.Cut(addr, ":")
			if !slices.ContainsFunc(c.Ports, func(p containerPort) bool {
				return p.Name == "metrics" && strconv.Itoa(p.ContainerPort) == num
			}) {
				t.Errorf("%s: -metrics-addr %s but no container port named metrics with port %s", where, addr, num)
			}
		}
		if c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation {
			t.Errorf("%s: set allowPrivilegeEscalation: false", where)
		}
		for _, e := range c.Env {
			envNames = append(envNames, e.Name)
		}
		for _, ef := range c.EnvFrom {
			switch {
			case ef.ConfigMapRef != nil:
				storageFrom[where] += " configmap " + ef.ConfigMapRef.Name
				data, ok := configMaps[ef.ConfigMapRef.Name]
				if !ok {
					t.Errorf("%s: config map %q is not defined in deploy/", where, ef.ConfigMapRef.Name)
				}
				for k := range data {
					envNames = append(envNames, k)
				}
				if a := data[azure.EnvAccount]; a != "" {
					accounts = append(accounts, a)
				}
				// The accounts are numbered without gaps, each a valid name.
				if _, err := azure.ConfigsFromEnv(func(k string) string { return data[k] }); err != nil {
					t.Errorf("%s: config map %s: %v", where, ef.ConfigMapRef.Name, err)
				}
			case ef.SecretRef != nil:
				storageFrom[where] += " secret " + ef.SecretRef.Name
				secrets[ef.SecretRef.Name] = true
				// Its keys (the numbered connection strings included) are
				// optional: without the secret, the pods use the ConfigMap.
				if !ef.SecretRef.Optional {
					t.Errorf("%s: secret %s: want optional: true", where, ef.SecretRef.Name)
				}
			}
		}
	}
	if froms := slices.Compact(slices.Sorted(maps.Values(storageFrom))); len(froms) != 1 {
		t.Errorf("the pods read their storage settings from different places: %v", storageFrom)
	}
	checkEnvNames(t, "deploy/", envNames)
	if len(runs) != 1 {
		t.Fatalf("the Deployment and the Job name runs %v: want one run", slices.Sorted(maps.Keys(runs)))
	}
	var run string
	for r := range runs {
		run = r
	}

	auths := map[string]triggerAuth{}
	for _, o := range byKind(objs, "TriggerAuthentication") {
		var ta triggerAuth
		decodeSpec(t, o, &ta)
		auths[o.Metadata.Name] = ta
	}
	var identity, connection bool
	for name, ta := range auths {
		switch {
		case ta.PodIdentity != nil:
			if ta.PodIdentity.Provider != "azure-workload" {
				t.Errorf("TriggerAuthentication %s: podIdentity provider %q, want azure-workload", name, ta.PodIdentity.Provider)
			}
			identity = true
		case len(ta.SecretTargetRef) == 1:
			r := ta.SecretTargetRef[0]
			// "connection" is the azure-queue scaler's parameter for a connection string.
			if r.Parameter != "connection" || r.Key != azure.EnvConnectionString || !secrets[r.Name] {
				t.Errorf("TriggerAuthentication %s: %+v: want parameter connection from key %s of a secret the workers read (%v)",
					name, r, azure.EnvConnectionString, slices.Sorted(maps.Keys(secrets)))
			}
			connection = true
		default:
			t.Errorf("TriggerAuthentication %s: neither podIdentity nor one secretTargetRef", name)
		}
	}
	if !identity || !connection {
		t.Errorf("want a workload-identity and a connection-string TriggerAuthentication; have identity %v, connection %v", identity, connection)
	}

	sos := byKind(objs, "ScaledObject")
	if len(sos) != 1 {
		t.Fatalf("%d ScaledObjects, want 1", len(sos))
	}
	var so scaledObject
	decodeSpec(t, sos[0], &so)
	if _, ok := deployments[so.ScaleTargetRef.Name]; !ok {
		t.Errorf("ScaledObject scales %q, not a Deployment in deploy/", so.ScaleTargetRef.Name)
	}
	if len(so.Triggers) != 1 || so.Triggers[0].Type != "azure-queue" {
		t.Fatalf("ScaledObject triggers %+v: want one azure-queue trigger", so.Triggers)
	}
	tr := so.Triggers[0]
	// The azure-queue scaler's metadata fields (keda.sh/docs/scalers/azure-storage-queue).
	known := []string{"queueName", "queueLength", "queueLengthStrategy", "activationQueueLength", "connectionFromEnv", "accountName", "cloud"}
	for k := range tr.Metadata {
		if !slices.Contains(known, k) {
			t.Errorf("azure-queue trigger: unknown metadata field %q (known: %v)", k, known)
		}
	}
	if got, want := tr.Metadata["queueName"], pipeline.WorkQueue(run); got != want {
		t.Errorf("ScaledObject queueName %q; the workers of run %q read %q", got, run, want)
	}
	// The work queue's whole length is work waiting or under way
	// (compensation messages have a queue of their own), so counting it
	// all keeps a worker for every task under way at a stage's tail,
	// when nothing is visible.
	if got := tr.Metadata["queueLengthStrategy"]; got != "all" {
		t.Errorf("queueLengthStrategy %q: want all, so that running tasks keep their workers through a stage's tail", got)
	}
	var concurrency string
	for _, c := range deployments[so.ScaleTargetRef.Name].Template.Spec.Containers {
		concurrency = flagValue(c.Args, "-concurrency")
	}
	if got, want := tr.Metadata["queueLength"], concurrency; got != want {
		t.Errorf("queueLength %q: want the messages one worker handles at once, its -concurrency %q, so each task under way keeps its worker", got, want)
	}
	for _, k := range []string{"queueLength", "activationQueueLength"} {
		if v, ok := tr.Metadata[k]; ok {
			if n, err := strconv.Atoi(v); err != nil || n < 0 {
				t.Errorf("%s %q: want a count", k, v)
			}
		}
	}
	if a := tr.Metadata["accountName"]; a == "" || !slices.Contains(accounts, a) {
		t.Errorf("trigger accountName %q: want the workers' %s %v", a, azure.EnvAccount, accounts)
	}
	if _, ok := auths[tr.AuthenticationRef.Name]; !ok {
		t.Errorf("trigger authenticationRef %q is not a TriggerAuthentication in deploy/", tr.AuthenticationRef.Name)
	}
}

// azidentityNames holds the AZURE_* names that azidentity's source reads,
// found in the module the build uses.
func azidentityNames(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/Azure/azure-sdk-for-go/sdk/azidentity").Output()
	if err != nil {
		t.Fatalf("locating azidentity: %v", err)
	}
	files, err := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("azidentity sources: %v", err)
	}
	var all strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	return all.String()
}

// checkEnvNames fails unless every name is read by storage/azure or, for
// DefaultAzureCredential, by azidentity.
func checkEnvNames(t *testing.T, where string, names []string) {
	t.Helper()
	var src string
	for _, n := range slices.Compact(slices.Sorted(slices.Values(names))) {
		if storageVariable(n) {
			continue
		}
		if src == "" {
			src = azidentityNames(t)
		}
		if !strings.Contains(src, strconv.Quote(n)) {
			t.Errorf("%s: environment variable %s is read neither by storage/azure (%s, %s) nor by azidentity",
				where, n, azure.EnvConnectionString, azure.EnvAccount)
		}
	}
}

// storageVariable reports whether storage/azure reads name: one of the
// accounts' numbered variables (azure.ConfigsFromEnv).
func storageVariable(name string) bool {
	for n := 1; n <= storage.MaxAccounts; n++ {
		if name == azure.EnvName(azure.EnvConnectionString, n) || name == azure.EnvName(azure.EnvAccount, n) {
			return true
		}
	}
	return false
}

// compose is the part of docker-compose.yml the tests look at.
type compose struct {
	Services map[string]struct {
		Image         string            `yaml:"image"`
		Build         any               `yaml:"build"`
		Entrypoint    []string          `yaml:"entrypoint"`
		Command       []string          `yaml:"command"`
		Environment   map[string]string `yaml:"environment"`
		Ports         []string          `yaml:"ports"`
		ContainerName string            `yaml:"container_name"`
		Profiles      []string          `yaml:"profiles"`
	} `yaml:"services"`
}

var composeVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:?-)([^}]*)\}`)

// interpolate gives every ${VAR:-default} and ${VAR-default} in the scalar
// values under n its default, as docker compose does with no variables
// set; any other use of $ is an error, since it would need the environment.
func interpolate(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		v := composeVar.ReplaceAllString(n.Value, "$3")
		if strings.Contains(strings.ReplaceAll(v, "$$", ""), "$") {
			return fmt.Errorf("line %d: %q: a variable without a default", n.Line, n.Value)
		}
		n.Value = strings.ReplaceAll(v, "$$", "$")
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 { // values only
			if err := interpolate(n.Content[i]); err != nil {
				return err
			}
		}
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			if err := interpolate(c); err != nil {
				return err
			}
		}
	}
	return nil
}

func loadCompose(t *testing.T) compose {
	t.Helper()
	b, err := os.ReadFile("../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	if err := interpolate(&root); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	var c compose
	if err := root.Decode(&c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return c
}

// flagValue returns the value after flag in args.
func flagValue(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

func TestComposeMatchesTheCode(t *testing.T) {
	c := loadCompose(t)
	for _, want := range []string{"azurite", "seed", "worker", "inspect"} {
		if _, ok := c.Services[want]; !ok {
			t.Fatalf("no %s service", want)
		}
	}

	az := c.Services["azurite"]
	script, err := os.ReadFile("../scripts/azurite.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`AZURITE_VERSION="\$\{AZURITE_VERSION:-([0-9.]+)\}"`).FindSubmatch(script)
	if m == nil {
		t.Fatal("scripts/azurite.sh: no AZURITE_VERSION")
	}
	if want := "mcr.microsoft.com/azure-storage/azurite:" + string(m[1]); az.Image != want {
		t.Errorf("azurite image %q, want %q (the version make test runs)", az.Image, want)
	}
	azArgs := strings.Join(az.Command, " ")
	for _, f := range []string{"--blobHost 0.0.0.0", "--queueHost 0.0.0.0", "--tableHost 0.0.0.0", "--skipApiVersionCheck", "--disableTelemetry"} {
		if !strings.Contains(azArgs, f) {
			t.Errorf("azurite command %q lacks %s", azArgs, f)
		}
	}
	// Azurite's ports, as the other services reach them.
	azPorts := map[string]bool{}
	for _, p := range az.Ports {
		parts := strings.Split(strings.TrimSuffix(p, "/tcp"), ":")
		azPorts[parts[len(parts)-1]] = true
	}

	var envNames []string
	runs := map[string]bool{}
	for _, name := range []string{"seed", "worker", "inspect"} {
		s := c.Services[name]
		where := "docker-compose.yml: " + name
		if len(s.Entrypoint) != 1 || commandName(t, where, s.Entrypoint[0]) != name {
			t.Errorf("%s: entrypoint %v, want [%s%s]", where, s.Entrypoint, binDir, name)
			continue
		}
		checkAccepts(t, where, name, s.Command)
		runs[runOf(s.Command)] = true
		for k := range s.Environment {
			envNames = append(envNames, k)
		}
		cs := s.Environment[azure.EnvConnectionString]
		if err := (azure.Config{ConnectionString: cs}).Validate(); err != nil {
			t.Errorf("%s: default connection string: %v", where, err)
		}
		for _, kv := range strings.Split(cs, ";") {
			k, v, _ := strings.Cut(kv, "=")
			if !strings.HasSuffix(k, "Endpoint") {
				continue
			}
			u, err := url.Parse(v)
			if err != nil || u.Hostname() != "azurite" || !azPorts[u.Port()] || u.Path != "/devstoreaccount1" {
				t.Errorf("%s: %s %q: want http://azurite:<a port of the azurite service>/devstoreaccount1", where, k, v)
			}
		}
	}
	checkEnvNames(t, "docker-compose.yml", envNames)
	// Every service sees the same accounts in the same order; by default
	// one, the azurite service.
	env := c.Services["worker"].Environment
	for _, name := range []string{"seed", "inspect"} {
		if !maps.Equal(c.Services[name].Environment, env) {
			t.Errorf("docker-compose.yml: %s's environment differs from the worker's: the storage accounts must be the same", name)
		}
	}
	if cfgs, err := azure.ConfigsFromEnv(func(k string) string { return env[k] }); err != nil || len(cfgs) != 1 {
		t.Errorf("docker-compose.yml: the default environment gives %d storage accounts (%v), want the one azurite", len(cfgs), err)
	}
	for n := 2; n <= 3; n++ {
		for _, base := range []string{azure.EnvConnectionString, azure.EnvAccount} {
			if _, ok := env[azure.EnvName(base, n)]; !ok {
				t.Errorf("docker-compose.yml: the worker does not pass %s on", azure.EnvName(base, n))
			}
		}
	}
	if len(runs) != 1 {
		t.Errorf("seed, worker and inspect name runs %v by default: want one", slices.Sorted(maps.Keys(runs)))
	}

	w := c.Services["worker"]
	if w.ContainerName != "" || len(w.Ports) > 0 {
		t.Errorf("worker: container_name %q, ports %v: neither may be fixed, or --scale worker=N fails", w.ContainerName, w.Ports)
	}
	if !slices.Contains(w.Command, "-exit-when-done") {
		t.Errorf("worker: want -exit-when-done, so docker compose up ends with the run")
	}
	if !slices.Contains(c.Services["inspect"].Profiles, "inspect") {
		t.Errorf("inspect: want profile inspect, so it runs only on demand")
	}

	// The compose defaults are the code's defaults, so an unset variable
	// means what the flag's default means.
	seed := c.Services["seed"].Command
	board, _ := strconv.Atoi(flagValue(seed, "-board"))
	wcfg := pipeline.WorkerConfig{}.WithDefaults()
	for _, d := range []struct{ what, got, want string }{
		{"seed -plies", flagValue(seed, "-plies"), strconv.Itoa(pipeline.DefaultTarget(board))},
		{"seed -blob-positions", flagValue(seed, "-blob-positions"), strconv.Itoa(pipeline.DefaultBlobPositions)},
		{"seed -bucket-blobs", flagValue(seed, "-bucket-blobs"), strconv.Itoa(pipeline.DefaultBucketBlobs)},
		{"worker -visibility", durationOrEmpty(flagValue(w.Command, "-visibility")), wcfg.Visibility.String()},
	} {
		if d.got != d.want {
			t.Errorf("docker-compose.yml: %s defaults to %q; the code's default is %q", d.what, d.got, d.want)
		}
	}
}

func durationOrEmpty(s string) string {
	d, err := time.ParseDuration(s)
	if err != nil {
		return s
	}
	return d.String()
}

func TestDockerfileBuildsEveryCommandStaticAndNonRoot(t *testing.T) {
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	need := regexp.MustCompile(`(?m)^go (\d+)\.(\d+)`).FindStringSubmatch(string(gomod))
	have := regexp.MustCompile(`(?m)^FROM .*golang:(\d+)\.(\d+)`).FindStringSubmatch(df)
	if need == nil || have == nil {
		t.Fatalf("go.mod go line %v, Dockerfile golang image %v", need, have)
	}
	if atoi(have[1])*1000+atoi(have[2]) < atoi(need[1])*1000+atoi(need[2]) {
		t.Errorf("Dockerfile builds with Go %s.%s; go.mod needs %s.%s", have[1], have[2], need[1], need[2])
	}
	for _, want := range []string{"CGO_ENABLED=0", "go build", "./cmd/...", "COPY --from=build /out/ " + binDir} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	stages := strings.Split(df, "\nFROM ")
	final := stages[len(stages)-1]
	user := regexp.MustCompile(`(?m)^USER (\S+)`).FindStringSubmatch(final)
	if user == nil || strings.HasPrefix(user[1], "0") || strings.HasPrefix(user[1], "root") {
		t.Errorf("the final stage must run as a non-root USER (got %v)", user)
	}
	ep := regexp.MustCompile(`(?m)^ENTRYPOINT \["([^"]+)"\]`).FindStringSubmatch(final)
	if ep == nil {
		t.Fatal("Dockerfile: no ENTRYPOINT [\"...\"] in the final stage")
	}
	commandName(t, "Dockerfile ENTRYPOINT", ep[1])
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// shellWords splits one shell line into commands and their words: quotes
// removed, a # comment dropped, ; & && | || ending a command, and leading
// VAR=value assignments skipped.
func shellWords(line string) [][]string {
	var cmds [][]string
	var words []string
	var w strings.Builder
	inWord := false
	endWord := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	endCmd := func() {
		endWord()
		for len(words) > 0 && assignment.MatchString(words[0]) {
			words = words[1:]
		}
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
		words = nil
	}
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\'' || c == '"':
			j := strings.IndexByte(line[i+1:], c)
			if j < 0 {
				j = len(line) - i - 1
			}
			w.WriteString(line[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '#' && !inWord:
			endCmd()
			return cmds
		case c == ' ' || c == '\t':
			endWord()
		case c == ';' || c == '&' || c == '|':
			endCmd()
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	endCmd()
	return cmds
}

// docPages are README.md and the pages of docs/, as paths from this
// directory, each with its text.
func docPages(t *testing.T) map[string]string {
	t.Helper()
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{}
	for _, p := range append([]string{"../README.md"}, pages...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		texts[strings.TrimPrefix(p, "../")] = string(b)
	}
	return texts
}

// readmeCommands returns the command lines in the code blocks of README.md
// and docs/*.md that start one of our programs: go run ./cmd/NAME ..., or
// docker compose run ... SERVICE ... for a compose service running NAME.
// Each line is prefixed with its page.
func readmeCommands(t *testing.T, c compose) (found []struct {
	line, name string
	args       []string
}) {
	t.Helper()
	pages := docPages(t)
	for _, page := range slices.Sorted(maps.Keys(pages)) {
		found = append(found, pageCommands(t, c, page, pages[page])...)
	}
	return found
}

func pageCommands(t *testing.T, c compose, page, text string) (found []struct {
	line, name string
	args       []string
}) {
	t.Helper()
	inCode := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inCode = !inCode
			continue
		}
		if !inCode {
			continue
		}
		for _, words := range shellWords(line) {
			add := func(name string, args []string) {
				found = append(found, struct {
					line, name string
					args       []string
				}{page + ": " + strings.TrimSpace(line), name, args})
			}
			switch {
			case len(words) >= 3 && words[0] == "go" && words[1] == "run" && strings.HasPrefix(words[2], "./cmd/"):
				add(strings.TrimPrefix(words[2], "./cmd/"), words[3:])
			case len(words) >= 3 && words[0] == "docker" && words[1] == "compose" && words[2] == "run":
				rest := words[3:]
				for len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
					if rest[0] != "--rm" {
						t.Errorf("%s: %q: the test knows only docker compose run --rm", page, line)
					}
					rest = rest[1:]
				}
				if len(rest) == 0 {
					t.Errorf("%s: %q: no service", page, line)
					continue
				}
				s, ok := c.Services[rest[0]]
				if !ok || len(s.Entrypoint) != 1 {
					t.Errorf("%s: %q: no compose service %q with an entrypoint", page, line, rest[0])
					continue
				}
				args := s.Command
				if len(rest) > 1 {
					args = rest[1:]
				}
				add(strings.TrimPrefix(s.Entrypoint[0], binDir), args)
			}
		}
	}
	return found
}

func TestReadmeCommandLinesAreAccepted(t *testing.T) {
	cmds := readmeCommands(t, loadCompose(t))
	if len(cmds) < 5 {
		t.Fatalf("found only %d command lines in the code blocks of README.md and docs/", len(cmds))
	}
	for _, c := range cmds {
		if commands[c.name] == nil {
			t.Errorf("%q runs %q, not a program under cmd/", c.line, c.name)
			continue
		}
		checkAccepts(t, c.line, c.name, c.args)
	}
}

// TestReadmeFlagsExist checks the flags README.md and docs/*.md name in
// inline code: a flag on its own, such as `-plies N`, against the flags
// any command defines; the flags of a command written in the prose, such
// as `enumerate -plan -plies 18` or `go run ./cmd/inspect -check`,
// against its program's own (e2e/inline_test.go runs or marks these
// commands; marked ones are checked only here and by bash -n).
func TestReadmeFlagsExist(t *testing.T) {
	defined := map[string]bool{}
	own := map[string]map[string]bool{} // by program
	flagLine := regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)`)
	for name, cmd := range commands {
		var out bytes.Buffer
		if code := cmd(cli.Env{Args: []string{"-h"}, Getenv: func(string) string { return "" }, Stdout: &out, Stderr: &out}); code != 0 {
			t.Fatalf("%s -h: exit %d", name, code)
		}
		own[name] = map[string]bool{"h": true, "help": true}
		for _, m := range flagLine.FindAllStringSubmatch(out.String(), -1) {
			defined[m[1]] = true
			own[name][m[1]] = true
		}
	}
	pages := docPages(t)
	inline := regexp.MustCompile("`([^`]+)`")
	flagWord := regexp.MustCompile(`^--?([a-z][a-z0-9-]*)(=.*)?$`)
	for _, page := range slices.Sorted(maps.Keys(pages)) {
		for _, m := range regexp.MustCompile("`-([a-z][a-z0-9-]*)[^`]*`").FindAllStringSubmatch(pages[page], -1) {
			if !defined[m[1]] {
				t.Errorf("%s names flag -%s in %s; no command defines it", page, m[1], m[0])
			}
		}
		for _, m := range inline.FindAllStringSubmatch(testkit.Prose(pages[page]), -1) {
			for _, words := range shellWords(strings.Join(strings.Fields(m[1]), " ")) {
				name, args := programArgs(words)
				if own[name] == nil {
					continue
				}
				for _, a := range args {
					if f := flagWord.FindStringSubmatch(a); f != nil && !own[name][f[1]] {
						t.Errorf("%s: %s gives %s flag -%s, which it does not define", page, m[0], name, f[1])
					}
				}
			}
		}
	}
	if regexp.MustCompile("`-([a-z][a-z0-9-]*)[^`]*`").FindString(pages["README.md"]) == "" {
		t.Error("README names no flags in inline code")
	}
}

// programArgs returns the program a command's words run, by name as
// installed, as cmd/NAME or as go run ./cmd/NAME, and its arguments; or
// "" if they run none of ours.
func programArgs(words []string) (name string, args []string) {
	switch {
	case len(words) >= 3 && words[0] == "go" && words[1] == "run" && strings.HasPrefix(words[2], "./cmd/"):
		return strings.TrimPrefix(words[2], "./cmd/"), words[3:]
	case len(words) >= 1 && commands[strings.TrimPrefix(words[0], "cmd/")] != nil:
		return strings.TrimPrefix(words[0], "cmd/"), words[1:]
	}
	return "", nil
}

// TestReadmeEnvironmentVariablesAreRead checks every AZURE_* name in
// README.md and docs/*.md.
func TestReadmeEnvironmentVariablesAreRead(t *testing.T) {
	pages := docPages(t)
	for _, page := range slices.Sorted(maps.Keys(pages)) {
		names := regexp.MustCompile(`\bAZURE_[A-Z_0-9]*[A-Z0-9]\b`).FindAllString(pages[page], -1)
		if page == "README.md" && (!slices.Contains(names, azure.EnvConnectionString) || !slices.Contains(names, azure.EnvAccount)) {
			t.Errorf("README should document %s and %s", azure.EnvConnectionString, azure.EnvAccount)
		}
		checkEnvNames(t, page, names)
	}
}

func TestShellWords(t *testing.T) {
	for _, tc := range []struct {
		line string
		want [][]string
	}{
		{"go run ./cmd/worker -run demo -exit-when-done & # more", [][]string{{"go", "run", "./cmd/worker", "-run", "demo", "-exit-when-done"}}},
		{`wait; go run ./cmd/inspect -run 'a b' -json "x.json"`, [][]string{{"wait"}, {"go", "run", "./cmd/inspect", "-run", "a b", "-json", "x.json"}}},
		{"RUN=big BOARD=6 docker compose up && make test", [][]string{{"docker", "compose", "up"}, {"make", "test"}}},
		{"a#b c", [][]string{{"a#b", "c"}}},
		{"# only a comment", nil},
	} {
		if got := shellWords(tc.line); !slices.EqualFunc(got, tc.want, slices.Equal) {
			t.Errorf("shellWords(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}

func TestProgramArgs(t *testing.T) {
	for _, tc := range []struct {
		words []string
		name  string
		args  []string
	}{
		{[]string{"enumerate", "-plan"}, "enumerate", []string{"-plan"}},
		{[]string{"cmd/solve", "-parallel", "1"}, "solve", []string{"-parallel", "1"}},
		{[]string{"go", "run", "./cmd/inspect", "-check"}, "inspect", []string{"-check"}},
		{[]string{"go", "run", "./plan/internal/measure", "-plies", "13"}, "", nil},
		{[]string{"kill", "-9"}, "", nil},
	} {
		if name, args := programArgs(tc.words); name != tc.name || !slices.Equal(args, tc.args) {
			t.Errorf("programArgs(%q) = %q, %q; want %q, %q", tc.words, name, args, tc.name, tc.args)
		}
	}
}
