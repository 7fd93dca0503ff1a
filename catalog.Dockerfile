# Serves App Operator's file-based catalog (catalog/) with opm, for a CatalogSource with an image.
FROM quay.io/operator-framework/opm:v1.60.0
ENTRYPOINT ["/bin/opm"]
CMD ["serve", "/configs", "--cache-dir=/tmp/cache"]
ADD catalog /configs
RUN ["/bin/opm", "serve", "/configs", "--cache-dir=/tmp/cache", "--cache-only"]
LABEL operators.operatorframework.io.index.configs.v1=/configs
