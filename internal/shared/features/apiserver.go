package features

import "k8s.io/component-base/featuregate"

// apiServerGates are the k8s.io/apiserver feature gates that the upstream
// csi-provisioner v6.4.0 accepts on --feature-gates, because it registers its
// own gates on the API server library's global gate. They govern an API
// server, not a client such as this sidecar: they are accepted, under
// upstream's maturity and default, so that a --feature-gates list written
// for upstream is accepted unchanged, and change nothing. test/compat checks
// the names against the upstream binary's --help; the GA and deprecated
// ones, which its --help does not list, are accepted as upstream accepts
// them (a locked one with its default only), from k8s.io/apiserver v0.36.1,
// the version upstream v6.4.0 pins.
var apiServerGates = map[featuregate.Feature]featuregate.FeatureSpec{
	"APIResponseCompression":                              {Default: true, PreRelease: featuregate.Beta},
	"APIServerIdentity":                                   {Default: true, PreRelease: featuregate.Beta},
	"APIServingWithRoutine":                               {Default: false, PreRelease: featuregate.Alpha},
	"AllowParsingUserUIDFromCertAuth":                     {Default: true, PreRelease: featuregate.Beta},
	"AllowUnsafeMalformedObjectDeletion":                  {Default: false, PreRelease: featuregate.Alpha},
	"CBORServingAndStorage":                               {Default: false, PreRelease: featuregate.Alpha},
	"ComponentFlagz":                                      {Default: true, PreRelease: featuregate.Beta},
	"ComponentStatusz":                                    {Default: true, PreRelease: featuregate.Beta},
	"ConcurrentWatchObjectDecode":                         {Default: false, PreRelease: featuregate.Beta},
	"ConstrainedImpersonation":                            {Default: true, PreRelease: featuregate.Beta},
	"CoordinatedLeaderElection":                           {Default: false, PreRelease: featuregate.Beta},
	"DeclarativeValidationBeta":                           {Default: true, PreRelease: featuregate.Beta},
	"DetectCacheInconsistency":                            {Default: true, PreRelease: featuregate.Beta},
	"ListFromCacheSnapshot":                               {Default: true, PreRelease: featuregate.Beta},
	"ManifestBasedAdmissionControlConfig":                 {Default: false, PreRelease: featuregate.Alpha},
	"NativeHistograms":                                    {Default: false, PreRelease: featuregate.Alpha},
	"OpenAPIEnums":                                        {Default: true, PreRelease: featuregate.Beta},
	"RemoteRequestHeaderUID":                              {Default: true, PreRelease: featuregate.Beta},
	"ShardedListAndWatch":                                 {Default: false, PreRelease: featuregate.Alpha},
	"SizeBasedListCostEstimate":                           {Default: true, PreRelease: featuregate.Beta},
	"StorageVersionAPI":                                   {Default: false, PreRelease: featuregate.Alpha},
	"StorageVersionHash":                                  {Default: true, PreRelease: featuregate.Beta},
	"StructuredAuthenticationConfigurationEgressSelector": {Default: true, PreRelease: featuregate.Beta},
	"StructuredAuthenticationConfigurationJWKSMetrics":    {Default: true, PreRelease: featuregate.Beta},
	"TokenRequestServiceAccountUIDValidation":             {Default: true, PreRelease: featuregate.Beta},
	"UnauthenticatedHTTP2DOSMitigation":                   {Default: true, PreRelease: featuregate.Beta},
	"UnknownVersionInteroperabilityProxy":                 {Default: true, PreRelease: featuregate.Beta},
	"WatchCacheInitializationPostStartHook":               {Default: true, PreRelease: featuregate.Beta},
	"WatchList":                                           {Default: true, PreRelease: featuregate.Beta},

	// GA and deprecated gates, which upstream's --help hides but its
	// --feature-gates accepts: an unlocked one with either value, a locked
	// one with its default only (each with a warning).
	"APIServerTracing":                      {Default: true, PreRelease: featuregate.GA, LockToDefault: true},
	"AggregatedDiscoveryRemoveBetaType":     {Default: true, PreRelease: featuregate.Deprecated, LockToDefault: true},
	"AnonymousAuthConfigurableEndpoints":    {Default: true, PreRelease: featuregate.GA, LockToDefault: true},
	"AuthorizeWithSelectors":                {Default: true, PreRelease: featuregate.GA, LockToDefault: true},
	"BtreeWatchCache":                       {Default: true, PreRelease: featuregate.GA, LockToDefault: true},
	"ConsistentListFromCache":               {Default: true, PreRelease: featuregate.GA, LockToDefault: true},
	"DeclarativeValidation":                 {Default: true, PreRelease: featuregate.GA, LockToDefault: true},
	"DeclarativeValidationTakeover":         {Default: false, PreRelease: featuregate.Deprecated},
	"KMSv1":                                 {Default: false, PreRelease: featuregate.Deprecated},
	"MutatingAdmissionPolicy":               {Default: true, PreRelease: featuregate.GA},
	"ResilientWatchCacheInitialization":     {Default: true, PreRelease: featuregate.GA, LockToDefault: true},
	"RetryGenerateName":                     {Default: true, PreRelease: featuregate.GA, LockToDefault: true},
	"SeparateCacheWatchRPC":                 {Default: false, PreRelease: featuregate.Deprecated, LockToDefault: true},
	"StreamingCollectionEncodingToJSON":     {Default: true, PreRelease: featuregate.GA, LockToDefault: true},
	"StreamingCollectionEncodingToProtobuf": {Default: true, PreRelease: featuregate.GA, LockToDefault: true},
	"StructuredAuthenticationConfiguration": {Default: true, PreRelease: featuregate.GA, LockToDefault: true},
}
