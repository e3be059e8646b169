# syntax=docker/dockerfile:1
# magnotia-mcp: an MCP server (stdio; Streamable HTTP on request) that reads a Magnotia store read-only.
#
#   docker build -t magnotia-mcp .                   # default: PyInstaller one-dir build, FROM scratch
#   docker build --build-arg FREEZE_MODE=onefile .   # the same with the one-file binary
#   docker build --target venv -t magnotia-mcp .     # python-slim + venv alternative
#   docker run -i --rm --network none --read-only -v "$HOME/Magnotia:/data:ro" magnotia-mcp
#   docker run --rm --read-only -p 127.0.0.1:8765:8765 -e MAGNOTIA_MCP_TOKEN \
#       -v "$HOME/Magnotia:/data:ro" magnotia-mcp serve --http 0.0.0.0:8765      # HTTP: docs/containers.md
#
# The label io.modelcontextprotocol.server.name ties the image to its MCP Registry
# entry (server.json); MAGNOTIA_MCP_IN_CONTAINER=1 lets a permission error on the
# store say to add --user "$(id -u):$(id -g)".
# Base images are pinned by ARG. Machines without a registry make same-named
# stand-ins first: `python devtools/container.py base-images`.
ARG PYTHON_IMAGE=docker.io/library/python:3.11-slim-bookworm

# ---------------------------------------------------------------- venv variant
FROM ${PYTHON_IMAGE} AS venv-build
COPY . /src
# The project's wheel with the [http] extra (serve --http) and its dependencies
# in a venv; pip and setuptools go afterwards, they are not needed to run. .pyc
# files are compiled here because the container's filesystem is read-only at run time.
RUN python3 -m venv /opt/magnotia \
    && /opt/magnotia/bin/pip install --no-cache-dir --disable-pip-version-check "/src[http]" \
    && /opt/magnotia/bin/python -m pip uninstall --yes --quiet pip setuptools

FROM ${PYTHON_IMAGE} AS venv
ARG VERSION=dev
LABEL org.opencontainers.image.title="magnotia-mcp" \
      org.opencontainers.image.description="MCP server (stdio, or Streamable HTTP with serve --http) that reads a local Magnotia store read-only" \
      org.opencontainers.image.source="https://github.com/magnotia/magnotia-mcp" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.version="${VERSION}" \
      io.modelcontextprotocol.server.name="app.magnotia/magnotia-mcp"
COPY --from=venv-build /opt/magnotia /opt/magnotia
# Official python images ship the standard library without .pyc files, and the
# container runs read-only, so every start would recompile what it imports
# (measured: +290 ms). Compile it once here (~11 MB).
RUN ["python3", "-c", "import compileall, re, sysconfig; compileall.compile_dir(sysconfig.get_path('stdlib'), quiet=2, workers=0, rx=re.compile(r'/(site-packages|dist-packages|tests?|idlelib|tkinter|turtledemo|lib2to3|ensurepip)/'))"]
ENV PATH=/opt/magnotia/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    MAGNOTIA_DB=/data/magnotia.db \
    MAGNOTIA_MCP_IN_CONTAINER=1
USER 65532:65532
VOLUME /data
# Only with `serve --http 0.0.0.0:8765`; the default command speaks stdio.
EXPOSE 8765
ENTRYPOINT ["magnotia-mcp"]

# -------------------------------------------------------------- frozen variant
FROM ${PYTHON_IMAGE} AS frozen-build
# PyInstaller needs objdump and strip. Not pinned: the stand-in base images
# come from Debian's current packages, so a pinned version would break on the
# next point release; this stage never reaches the final image.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends binutils \
    && rm -rf /var/lib/apt/lists/*
COPY . /src
WORKDIR /src
ARG FREEZE_MODE=onedir
RUN python3 -m venv /opt/freeze \
    && /opt/freeze/bin/pip install --no-cache-dir --disable-pip-version-check "/src[http]" pyinstaller==6.22.3 \
    && MAGNOTIA_FREEZE_MODE=${FREEZE_MODE} /opt/freeze/bin/pyinstaller --noconfirm --log-level WARN \
        --distpath /out --workpath /tmp/pyinstaller packaging/magnotia-mcp.spec \
    && /opt/freeze/bin/python packaging/rootfs.py /out/magnotia-mcp /rootfs \
    && chroot /rootfs /usr/local/bin/magnotia-mcp --version

FROM scratch AS frozen
ARG VERSION=dev
LABEL org.opencontainers.image.title="magnotia-mcp" \
      org.opencontainers.image.description="MCP server (stdio, or Streamable HTTP with serve --http) that reads a local Magnotia store read-only" \
      org.opencontainers.image.source="https://github.com/magnotia/magnotia-mcp" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.version="${VERSION}" \
      io.modelcontextprotocol.server.name="app.magnotia/magnotia-mcp"
COPY --from=frozen-build /rootfs /
ENV PATH=/usr/local/bin \
    MAGNOTIA_DB=/data/magnotia.db \
    MAGNOTIA_MCP_IN_CONTAINER=1
USER 65532:65532
VOLUME /data
# Only with `serve --http 0.0.0.0:8765`; the default command speaks stdio.
EXPOSE 8765
ENTRYPOINT ["/usr/local/bin/magnotia-mcp"]
