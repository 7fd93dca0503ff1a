// Package desired builds, as pure functions of an App, the objects the App should have:
// a Deployment, a Service, a HorizontalPodAutoscaler and a PodDisruptionBudget. Builders read
// no client, clock or environment; whatever they need from outside comes in Options.
package desired
