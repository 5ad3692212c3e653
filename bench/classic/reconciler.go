// The reconcile loop: one DynamoPoolRelay key at a time per worker, everything read from the
// manager's cache, the children written by server-side apply only where they differ, the status
// written only when it changed.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

var (
	dprGVK = schema.GroupVersionKind{Group: group, Version: "v1alpha1", Kind: kindDPR}
	// The index of EndpointSlices by the Service they belong to.
	serviceNameIndex = "classic.serviceName"
)

// child kinds as the cache holds them (typed), and how a live one is turned into JSON.
var childTypes = map[string]struct {
	apiVersion string
	resource   string
	newObj     func() client.Object
}{
	"ServiceAccount": {"v1", "serviceaccounts", func() client.Object { return &corev1.ServiceAccount{} }},
	"Role":           {"rbac.authorization.k8s.io/v1", "roles", func() client.Object { return &rbacv1.Role{} }},
	"RoleBinding":    {"rbac.authorization.k8s.io/v1", "rolebindings", func() client.Object { return &rbacv1.RoleBinding{} }},
	"ConfigMap":      {"v1", "configmaps", func() client.Object { return &corev1.ConfigMap{} }},
	"Deployment":     {"apps/v1", "deployments", func() client.Object { return &appsv1.Deployment{} }},
	"Service":        {"v1", "services", func() client.Object { return &corev1.Service{} }},
}

type Reconciler struct {
	client.Client
	Settings Settings
	DGDGVK   schema.GroupVersionKind
	// Outcomes, for the line printed at exit.
	Reconciles, Conflicts, StatusWrites, ChildApplies, Deletes atomic.Int64
}

// SetupWithManager: For the DynamoPoolRelays, Owns the six child kinds, the DGDs mapped to the
// DynamoPoolRelay of their name, and the Relay Services' EndpointSlices mapped to theirs.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, workers int) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &discoveryv1.EndpointSlice{}, serviceNameIndex, func(o client.Object) []string {
		if svc, ok := o.GetLabels()[serviceNameLabel]; ok {
			return []string{svc}
		}
		return nil
	}); err != nil {
		return err
	}
	dpr := &unstructured.Unstructured{}
	dpr.SetGroupVersionKind(dprGVK)
	dgd := &unstructured.Unstructured{}
	dgd.SetGroupVersionKind(r.DGDGVK)
	b := ctrl.NewControllerManagedBy(mgr).
		Named("dynamopoolrelay").
		For(dpr).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Watches(dgd, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}}}
		})).
		Watches(&discoveryv1.EndpointSlice{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			svc := o.GetLabels()[serviceNameLabel]
			name, ok := strings.CutSuffix(svc, serviceSuffix)
			if !ok || name == "" {
				return nil
			}
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
		}))
	for _, kind := range childKinds {
		b = b.Owns(childTypes[kind].newObj())
	}
	return b.Complete(r)
}

// now is the product's clock format: RFC 3339 in UTC, whole seconds.
func now() string { return time.Now().UTC().Format("2006-01-02T15:04:05Z") }

// toJSON turns a typed object read from the cache into the JSON the API server would serve.
func toJSON(obj client.Object, apiVersion, kind string) (M, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	m["apiVersion"], m["kind"] = apiVersion, kind
	return m, nil
}

func (r *Reconciler) getChild(ctx context.Context, kind, namespace, name string) (M, error) {
	t := childTypes[kind]
	obj := t.newObj()
	if err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return toJSON(obj, t.apiVersion, kind)
}

// readyEndpoints counts the ready endpoints (nil means ready) behind the Service, from the cache.
func (r *Reconciler) readyEndpoints(ctx context.Context, namespace, service string) (int, error) {
	var slices discoveryv1.EndpointSliceList
	if err := r.List(ctx, &slices, client.InNamespace(namespace), client.MatchingFields{serviceNameIndex: service}); err != nil {
		return 0, err
	}
	n := 0
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				n++
			}
		}
	}
	return n, nil
}

// transient: what passes with time (the product's ApiError.transient); everything else is a refusal.
func transient(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true
	}
	code := status.Status().Code
	return code >= 500 || code == http.StatusTooManyRequests || code == http.StatusConflict || code == http.StatusRequestTimeout || code == 0
}

// refusal words a refused apply as the product's client does: `PATCH <path>: <code> <message>`.
func refusal(err error, kind, namespace, name string) string {
	var status apierrors.APIStatus
	errors.As(err, &status)
	t := childTypes[kind]
	prefix := "/api/v1"
	if t.apiVersion != "v1" {
		prefix = "/apis/" + t.apiVersion
	}
	return fmt.Sprintf("PATCH %s/namespaces/%s/%s/%s: %d %s", prefix, namespace, t.resource, name, status.Status().Code, status.Status().Message)
}

func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	r.Reconciles.Add(1)
	start := time.Now()
	var out outcome
	result, err := r.reconcile(ctx, req, &out)
	if apierrors.IsConflict(err) {
		r.Conflicts.Add(1)
	}
	// --zap-log-level=debug: one line a reconcile, what it did and what it saw.
	logf.FromContext(ctx).V(1).Info("reconciled", "action", out.action, "applied", out.applied, "applyMillis", out.applyMillis, "ready", out.ready,
		"readyEndpoints", out.readyEndpoints, "statusWritten", out.statusWritten, "statusMillis", out.statusMillis, "seconds", time.Since(start).Seconds(), "error", err)
	return result, err
}

// outcome: what one reconcile did, for its debug log line.
type outcome struct {
	action, ready  string
	applied        []string
	applyMillis    []int64 // each apply's time, in the order of applied (and the one that failed)
	readyEndpoints int
	statusWritten  bool
	statusMillis   int64
}

func (r *Reconciler) reconcile(ctx context.Context, req ctrl.Request, out *outcome) (ctrl.Result, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(dprGVK)
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if obj.GetDeletionTimestamp() != nil {
		return ctrl.Result{}, nil // garbage collection removes the children with it
	}
	dgdObj := &unstructured.Unstructured{}
	dgdObj.SetGroupVersionKind(r.DGDGVK)
	var rawDGD M
	if err := r.Get(ctx, req.NamespacedName, dgdObj); err == nil {
		rawDGD = dgdObj.Object
	} else if !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	d := decide(obj.Object, rawDGD, r.Settings)
	out.action = d.Action
	dpr := d.DPR
	ns, name := req.Namespace, childName(req.Name)
	in := planInput{dpr: dpr, decision: d, live: liveChildren{}, now: now()}

	switch d.Action {
	case "reject":
		// The children are left as they are.
	case "withdraw":
		svc, err := r.getChild(ctx, "Service", ns, name)
		if err != nil {
			return ctrl.Result{}, err
		}
		dep, err := r.getChild(ctx, "Deployment", ns, name)
		if err != nil {
			return ctrl.Result{}, err
		}
		kept := svc
		if ownership(svc, dpr.UID) == "ours" {
			uid := types.UID(metaOfObj(svc)["uid"].(string))
			target := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
			err := r.Delete(ctx, target, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
			switch {
			case err == nil:
				r.Deletes.Add(1)
				kept = nil
			case !apierrors.IsNotFound(err):
				return ctrl.Result{}, err
			}
		}
		in.live["Service"], in.live["Deployment"] = kept, dep
		if kept != nil {
			if in.readyEndpoints, err = r.readyEndpoints(ctx, ns, name); err != nil {
				return ctrl.Result{}, err
			}
		}
	case "apply":
		in.desired = desiredChildren(d)
		for _, kind := range childKinds {
			live, err := r.getChild(ctx, kind, ns, name)
			if err != nil {
				return ctrl.Result{}, err
			}
			in.live[kind] = live
		}
		// Endpoints only behind a Service that existed when read: one just created has none yet.
		if in.live["Service"] != nil {
			var err error
			if in.readyEndpoints, err = r.readyEndpoints(ctx, ns, name); err != nil {
				return ctrl.Result{}, err
			}
		}
		plan := planApply(in.desired, in.live, dpr.UID)
		for _, item := range plan.apply {
			kind := kindOf(item.object)
			u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(item.object)}
			opts := []client.ApplyOption{client.FieldOwner(fieldManager)}
			if item.force {
				opts = append(opts, client.ForceOwnership)
			}
			applyStart := time.Now()
			err := r.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opts...)
			out.applyMillis = append(out.applyMillis, time.Since(applyStart).Milliseconds())
			if err != nil {
				if transient(err) {
					return ctrl.Result{}, err
				}
				in.refused = refusal(err, kind, ns, name)
				break
			}
			r.ChildApplies.Add(1)
			out.applied = append(out.applied, kind)
			in.live[kind] = u.Object // the status these writes make, from what they returned
		}
	}

	plan := planStatus(in)
	result := ctrl.Result{}
	out.readyEndpoints = in.readyEndpoints
	ready := previousCondition(M{"conditions": plan.status["conditions"]}, "Ready")
	if ready != nil {
		out.ready = fmt.Sprintf("%v/%v", ready["status"], ready["reason"])
	}
	if ready != nil && ready["reason"] == "ForeignChild" {
		// A foreign child's removal sends this DynamoPoolRelay no event: look again, as the product's resync does.
		result.RequeueAfter = time.Minute
	}
	if !plan.write {
		return result, nil
	}
	obj.Object["status"] = plan.status
	statusStart := time.Now()
	err := r.Status().Update(ctx, obj)
	out.statusMillis = time.Since(statusStart).Milliseconds()
	if err != nil {
		return ctrl.Result{}, err
	}
	r.StatusWrites.Add(1)
	out.statusWritten = true
	return result, nil
}
