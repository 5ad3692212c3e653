// Command eventing-controllers runs Knative Eventing's own, unmodified reconcilers in one process:
// those of cmd/controller (channels, subscriptions, ApiServerSource, PingSource, ContainerSource),
// cmd/mtchannel_broker (Broker, Trigger), cmd/in_memory/channel_controller (InMemoryChannel) and the
// SinkBinding reconciler of cmd/webhook.
//
// Why one process: every knative.dev/pkg sharedmain binary serves health probes on the fixed port
// :8080, which the InMemoryChannel dispatcher also needs, so separate processes would collide on one
// host. Left out on purpose: the EventType and source-duck reconcilers (without the conversion
// webhook they fight each other), and the admission webhooks (no webhook runs here; the manifests
// are checked with Knative's own defaulting and validation by cmd/knative-check instead).
package main

import (
	filteredFactory "knative.dev/pkg/client/injection/kube/informers/factory/filtered"
	"knative.dev/pkg/injection/sharedmain"
	"knative.dev/pkg/signals"

	"knative.dev/eventing/pkg/auth"
	"knative.dev/eventing/pkg/eventingtls"
	"knative.dev/eventing/pkg/reconciler/apiserversource"
	"knative.dev/eventing/pkg/reconciler/broker"
	mttrigger "knative.dev/eventing/pkg/reconciler/broker/trigger"
	"knative.dev/eventing/pkg/reconciler/channel"
	"knative.dev/eventing/pkg/reconciler/containersource"
	inmemorychannel "knative.dev/eventing/pkg/reconciler/inmemorychannel/controller"
	"knative.dev/eventing/pkg/reconciler/pingsource"
	"knative.dev/eventing/pkg/reconciler/sinkbinding"
	"knative.dev/eventing/pkg/reconciler/subscription"
)

func main() {
	ctx := signals.NewContext()
	// The label selectors of the filtered informers that these reconcilers ask for (the OIDC and
	// trust-bundle ones, as cmd/mtchannel_broker and cmd/webhook register them).
	ctx = filteredFactory.WithSelectors(ctx,
		auth.OIDCLabelSelector,
		eventingtls.TrustBundleLabelSelector,
	)
	ctx = sharedmain.WithHADisabled(ctx)
	ctx = sharedmain.WithHealthProbesDisabled(ctx)
	sharedmain.MainWithContext(ctx, "eventing-controllers",
		channel.NewController,
		subscription.NewController,
		apiserversource.NewController,
		pingsource.NewController,
		containersource.NewController,
		sinkbinding.NewController,
		broker.NewController,
		mttrigger.NewController,
		inmemorychannel.NewController,
	)
}
