// Command knative-check runs what Knative's admission webhooks run on create, over Kubernetes
// manifests: decoding (strict for eventing, as its webhook decodes), SetDefaults, then Validate, of
// the Knative Eventing and Serving API types, with the webhooks' ConfigMaps in the context.
//
// Without a webhook in the cluster the objects are stored as written, so it also reports every
// field that SetDefaults would add or change on an eventing object: the manifests must spell those
// out themselves. (Serving objects are not held to that: no Knative Serving runs locally.)
//
// Usage: knative-check --config DIR [--config DIR...] [FILE...]   (no FILE: standard input)
// Exit status 1 when any object is invalid, 2 on bad usage or unreadable input.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"knative.dev/pkg/apis"
	"knative.dev/pkg/configmap"
	"knative.dev/pkg/logging"

	defaultconfig "knative.dev/eventing/pkg/apis/config"
	eventingv1 "knative.dev/eventing/pkg/apis/eventing/v1"
	"knative.dev/eventing/pkg/apis/feature"
	channeldefaultconfig "knative.dev/eventing/pkg/apis/messaging/config"
	messagingv1 "knative.dev/eventing/pkg/apis/messaging/v1"
	pingdefaultconfig "knative.dev/eventing/pkg/apis/sources/config"
	sourcesv1 "knative.dev/eventing/pkg/apis/sources/v1"
	servingconfig "knative.dev/serving/pkg/apis/config"
	servingv1 "knative.dev/serving/pkg/apis/serving/v1"
)

// knativeObject is what both webhooks require of a type: defaulting and validation.
type knativeObject interface {
	apis.Defaultable
	apis.Validatable
}

type kind struct {
	make     func() knativeObject
	eventing bool
}

var kinds = map[schema.GroupVersionKind]kind{
	eventingv1.SchemeGroupVersion.WithKind("Broker"):           {func() knativeObject { return &eventingv1.Broker{} }, true},
	eventingv1.SchemeGroupVersion.WithKind("Trigger"):          {func() knativeObject { return &eventingv1.Trigger{} }, true},
	messagingv1.SchemeGroupVersion.WithKind("InMemoryChannel"): {func() knativeObject { return &messagingv1.InMemoryChannel{} }, true},
	messagingv1.SchemeGroupVersion.WithKind("Subscription"):    {func() knativeObject { return &messagingv1.Subscription{} }, true},
	sourcesv1.SchemeGroupVersion.WithKind("ApiServerSource"):   {func() knativeObject { return &sourcesv1.ApiServerSource{} }, true},
	sourcesv1.SchemeGroupVersion.WithKind("PingSource"):        {func() knativeObject { return &sourcesv1.PingSource{} }, true},
	sourcesv1.SchemeGroupVersion.WithKind("SinkBinding"):       {func() knativeObject { return &sourcesv1.SinkBinding{} }, true},
	sourcesv1.SchemeGroupVersion.WithKind("ContainerSource"):   {func() knativeObject { return &sourcesv1.ContainerSource{} }, true},
	servingv1.SchemeGroupVersion.WithKind("Service"):           {func() knativeObject { return &servingv1.Service{} }, false},
}

type dirs []string

func (d *dirs) String() string     { return strings.Join(*d, ",") }
func (d *dirs) Set(v string) error { *d = append(*d, v); return nil }

func main() {
	var configDirs dirs
	flag.Var(&configDirs, "config", "a folder of ConfigMap YAML files the webhooks would read (repeatable)")
	flag.Parse()
	if len(configDirs) == 0 {
		fmt.Fprintln(os.Stderr, "knative-check: at least one --config DIR is needed")
		os.Exit(2)
	}
	ctx, err := webhookContext(configDirs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "knative-check:", err)
		os.Exit(2)
	}
	docs, err := readInputs(flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "knative-check:", err)
		os.Exit(2)
	}
	failed, checked := 0, 0
	for _, d := range docs {
		problems, known, err := check(ctx, d.raw)
		if err != nil {
			fmt.Printf("ERROR %s: %v\n", d.where, err)
			failed++
			continue
		}
		if !known {
			continue
		}
		checked++
		if len(problems) == 0 {
			fmt.Printf("OK    %s\n", d.where)
			continue
		}
		failed++
		for _, p := range problems {
			fmt.Printf("ERROR %s: %s\n", d.where, p)
		}
	}
	fmt.Printf("%d Knative objects checked, %d invalid\n", checked, failed)
	if failed > 0 {
		os.Exit(1)
	}
}

// webhookContext carries the ConfigMaps exactly as the eventing and serving webhooks attach them.
func webhookContext(configDirs []string) (context.Context, error) {
	var cms []*corev1.ConfigMap
	for _, dir := range configDirs {
		found, err := configMaps(dir)
		if err != nil {
			return nil, err
		}
		cms = append(cms, found...)
	}
	watcher := configmap.NewStaticWatcher(cms...)
	logger := logging.FromContext(context.Background())
	ctx := context.Background()
	stores := []interface {
		WatchConfigs(configmap.Watcher)
		ToContext(context.Context) context.Context
	}{
		defaultconfig.NewStore(logger), channeldefaultconfig.NewStore(logger), pingdefaultconfig.NewStore(logger),
		feature.NewStore(logger), servingconfig.NewStore(logger),
	}
	var missing error
	for _, s := range stores {
		func() {
			defer func() {
				if r := recover(); r != nil {
					missing = fmt.Errorf("the webhooks' ConfigMaps in the --config folders cannot be read (one missing?): %v", r)
				}
			}()
			s.WatchConfigs(watcher)
		}()
		if missing != nil {
			return nil, missing
		}
		ctx = s.ToContext(ctx)
	}
	return ctx, nil
}

func configMaps(dir string) ([]*corev1.ConfigMap, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var out []*corev1.ConfigMap
	for _, f := range files {
		docs, err := readFile(f)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			var cm corev1.ConfigMap
			if err := json.Unmarshal(d.raw, &cm); err != nil || cm.Kind != "ConfigMap" {
				continue
			}
			out = append(out, &cm)
		}
	}
	return out, nil
}

type doc struct {
	where string
	raw   []byte
}

func readInputs(files []string) ([]doc, error) {
	if len(files) == 0 {
		return readStream("<stdin>", os.Stdin)
	}
	var out []doc
	for _, f := range files {
		docs, err := readFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, docs...)
	}
	return out, nil
}

func readFile(path string) ([]doc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readStream(path, f)
}

// readStream splits a YAML stream into JSON documents, each named by file, position, kind and name.
func readStream(name string, r io.Reader) ([]doc, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var out []doc
	for i := 1; ; i++ {
		chunk, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		raw, err := yaml.YAMLToJSON(chunk)
		if err != nil {
			return nil, fmt.Errorf("%s document %d: %w", name, i, err)
		}
		if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
			continue
		}
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(raw, &meta)
		out = append(out, doc{where: fmt.Sprintf("%s document %d (%s %s/%s)", name, i, meta.Kind, meta.Metadata.Namespace, meta.Metadata.Name), raw: raw})
	}
}

// check returns the webhook's complaints about one object, and whether it is a Knative kind at all.
func check(ctx context.Context, raw []byte) ([]string, bool, error) {
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(raw, &tm); err != nil {
		return nil, false, err
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil {
		return nil, false, err
	}
	k, ok := kinds[gv.WithKind(tm.Kind)]
	if !ok {
		return nil, false, nil
	}
	obj := k.make()
	decoder := json.NewDecoder(bytes.NewReader(raw))
	if k.eventing {
		decoder.DisallowUnknownFields()
	}
	if err := decoder.Decode(obj); err != nil {
		return []string{fmt.Sprintf("the webhook cannot decode it: %v", err)}, true, nil
	}
	ctx = apis.WithinCreate(ctx)
	ctx = apis.WithUserInfo(ctx, &authenticationv1.UserInfo{Username: "knative-check"})
	var problems []string
	before, err := canonical(obj)
	if err != nil {
		return nil, true, err
	}
	obj.SetDefaults(ctx)
	if k.eventing {
		after, err := canonical(obj)
		if err != nil {
			return nil, true, err
		}
		for _, d := range diff("", before, after) {
			problems = append(problems, "the webhook would default "+d+": write it in the manifest (no webhook runs locally)")
		}
	}
	if fe := obj.Validate(ctx); fe != nil {
		for _, e := range fe.WrappedErrors() {
			problems = append(problems, "invalid: "+e.Error())
		}
		if len(fe.WrappedErrors()) == 0 {
			problems = append(problems, "invalid: "+fe.Error())
		}
	}
	return problems, true, nil
}

func canonical(obj any) (any, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var v any
	return v, json.Unmarshal(b, &v)
}

// diff lists the paths where defaulting changed the object, with the value it would set.
func diff(path string, before, after any) []string {
	if reflect.DeepEqual(before, after) {
		return nil
	}
	if path == ".status" || strings.HasPrefix(path, ".status.") {
		return nil
	}
	bm, bok := before.(map[string]any)
	am, aok := after.(map[string]any)
	if bok && aok {
		keys := map[string]bool{}
		for k := range bm {
			keys[k] = true
		}
		for k := range am {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		var out []string
		for _, k := range sorted {
			out = append(out, diff(path+"."+k, bm[k], am[k])...)
		}
		return out
	}
	value, _ := json.Marshal(after)
	if path == "" {
		path = "."
	}
	return []string{fmt.Sprintf("%s to %s", path, value)}
}
