{{/* Names ------------------------------------------------------------------------------ */}}

{{- define "strata.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* <release>-strata, or the release name alone when it already holds the chart's name. */}}
{{- define "strata.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "strata.masterHeadless" -}}
{{- include "strata.fullname" . }}-master-headless
{{- end -}}

{{/* Every master's stable DNS name with its gRPC port, in ordinal order: the same list for
     every process (strata.master.addresses). */}}
{{- define "strata.masterAddresses" -}}
{{- $full := include "strata.fullname" . -}}
{{- $svc := include "strata.masterHeadless" . -}}
{{- $addresses := list -}}
{{- range $i := until (int .Values.master.replicas) -}}
{{- $addresses = append $addresses (printf "%s-master-%d.%s.%s.svc.%s:19200" $full $i $svc $.Release.Namespace $.Values.clusterDomain) -}}
{{- end -}}
{{- join "," $addresses -}}
{{- end -}}

{{/* Labels: call with (dict "ctx" $ "component" "master"). -------------------------------- */}}

{{- define "strata.selectorLabels" -}}
app.kubernetes.io/name: {{ include "strata.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "strata.labels" -}}
{{ include "strata.selectorLabels" . }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .ctx.Chart.Name .ctx.Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* Metadata of an object: call with (dict "ctx" $ "component" "master" "name" "x"). */}}
{{- define "strata.metadata" -}}
name: {{ include "strata.fullname" .ctx }}-{{ .name | default .component }}
namespace: {{ .ctx.Release.Namespace }}
labels:
  {{- include "strata.labels" . | nindent 2 }}
{{- end -}}

{{/* Pods ---------------------------------------------------------------------------------- */}}

{{/* The image of a container: (dict "ctx" $ "tag" .Values.worker.imageTag); a component's own
     tag wins over image.tag, which wins over the chart's appVersion. */}}
{{- define "strata.image" -}}
image: {{ .ctx.Values.image.repository }}:{{ .tag | default .ctx.Values.image.tag | default .ctx.Chart.AppVersion }}
imagePullPolicy: {{ .ctx.Values.image.pullPolicy }}
{{- end -}}

{{/* Pod annotations of a component: (dict "ctx" $ "values" .Values.master "webPort" 19201). */}}
{{- define "strata.podAnnotations" -}}
{{- $annotations := dict -}}
{{- if .ctx.Values.metrics.podAnnotations -}}
{{- $_ := set $annotations "prometheus.io/scrape" "true" -}}
{{- $_ := set $annotations "prometheus.io/port" (toString .webPort) -}}
{{- $_ := set $annotations "prometheus.io/path" "/metrics" -}}
{{- end -}}
{{- with .values.podAnnotations }}{{ $annotations = merge (dict) . $annotations }}{{ end -}}
{{- with $annotations }}{{ toYaml . }}{{ end -}}
{{- end -}}

{{/* nodeSelector, tolerations, affinity and pull secrets of a component's pod spec. */}}
{{- define "strata.scheduling" -}}
{{- with .ctx.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Readiness and liveness on the process's /health: (dict "port" 19201). */}}
{{- define "strata.probes" -}}
readinessProbe:
  httpGet:
    path: /health
    port: {{ .port }}
  periodSeconds: 5
  failureThreshold: 3
livenessProbe:
  httpGet:
    path: /health
    port: {{ .port }}
  initialDelaySeconds: 30
  periodSeconds: 10
  timeoutSeconds: 5
  failureThreshold: 6
startupProbe:
  httpGet:
    path: /health
    port: {{ .port }}
  periodSeconds: 5
  failureThreshold: 60
{{- end -}}

{{/* strata.* keys as environment variables: upper case, dots become underscores. */}}
{{- define "strata.configEnv" -}}
{{- range $key, $value := . }}
- name: {{ $key | upper | replace "." "_" | replace "-" "_" }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- end -}}

{{/* Environment every Strata process gets, then the component's own keys and variables:
     (dict "ctx" $ "values" .Values.worker). */}}
{{- define "strata.env" -}}
- name: STRATA_MASTER_ADDRESSES
  value: {{ include "strata.masterAddresses" .ctx | quote }}
{{- with .ctx.Values.underStore.credentials.existingSecret }}
- name: AWS_ACCESS_KEY_ID
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $.ctx.Values.underStore.credentials.accessKeyIdKey }}
- name: AWS_SECRET_ACCESS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $.ctx.Values.underStore.credentials.secretAccessKeyKey }}
{{- end }}
{{- include "strata.configEnv" (merge (dict) (.values.config | default dict) .ctx.Values.config) }}
{{- with .ctx.Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- with .values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* JVM options of a server: (dict "values" .Values.worker). */}}
{{- define "strata.javaOpts" -}}
{{- $jvm := .values.jvm -}}
{{- $opts := list (printf "-Xms%s" $jvm.heap) (printf "-Xmx%s" $jvm.heap) -}}
{{- with $jvm.directMemory }}{{ $opts = append $opts (printf "-XX:MaxDirectMemorySize=%s" .) }}{{ end -}}
{{- with .values.javaOpts }}{{ $opts = append $opts . }}{{ end -}}
{{- join " " $opts -}}
{{- end -}}

{{/* A Strata size (4GB, 512MB: powers of 1024) as a Kubernetes quantity (4Gi, 512Mi). */}}
{{- define "strata.quantity" -}}
{{- $size := . | toString | trim -}}
{{- if regexMatch "^[0-9]+$" $size -}}
{{- $size -}}
{{- else if regexMatch "^[0-9]+ *[KMGT]i?B$" $size -}}
{{- regexReplaceAll "^([0-9]+) *([KMGT])i?B$" $size "${1}${2}i" -}}
{{- else if regexMatch "^[0-9]+ *B$" $size -}}
{{- regexReplaceAll "^([0-9]+) *B$" $size "${1}" -}}
{{- else -}}
{{- fail (printf "%q is not a size in whole B, KB, MB, GB or TB" $size) -}}
{{- end -}}
{{- end -}}

{{/* The under store's volume, when it is a shared folder: the pod's volumes entry and the
     container's mount. */}}
{{- define "strata.underStoreVolume" -}}
{{- with .Values.underStore.volume }}
- name: under-store
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{- define "strata.underStoreMount" -}}
{{- if .Values.underStore.volume }}
- name: under-store
  mountPath: {{ .Values.underStore.mountPath }}
{{- end }}
{{- end -}}

{{/* Container security context of the servers. */}}
{{- define "strata.containerSecurityContext" -}}
allowPrivilegeEscalation: false
capabilities:
  drop: [ALL]
{{- end -}}

{{/* The masters' addresses from the highest ordinal down, space-separated. */}}
{{- define "strata.masterPeersDescending" -}}
{{- splitList "," (include "strata.masterAddresses" .) | reverse | join " " -}}
{{- end -}}

{{/* underStore.options as strata.master.root.ufs.options: key=value,key=value. */}}
{{- define "strata.underStoreOptions" -}}
{{- $pairs := list -}}
{{- range $key, $value := .Values.underStore.options -}}
{{- $pairs = append $pairs (printf "%s=%v" $key $value) -}}
{{- end -}}
{{- join "," $pairs -}}
{{- end -}}

{{/* POD_NAME, which other variables and subPathExpr refer to as $(POD_NAME). */}}
{{- define "strata.podNameEnv" -}}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
{{- end -}}

{{/* The worker's SSD tier mount; a StatefulSet's pods keep a node folder of their own name. */}}
{{- define "strata.workerSsdMount" -}}
- name: ssd
  mountPath: /var/lib/strata/worker/ssd
  {{- if .statefulSet }}
  subPathExpr: $(POD_NAME)
  {{- end }}
{{- end -}}
