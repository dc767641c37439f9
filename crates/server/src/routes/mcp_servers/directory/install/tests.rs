use super::*;
use serde_json::json;

fn server(document: serde_json::Value) -> ServerJson {
    serde_json::from_value(document).unwrap()
}

fn values(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(key, value)| (key.to_string(), value.to_string()))
        .collect()
}

/// Shaped like the official registry's `io.github.modelcontextprotocol/filesystem`-style
/// entries: an npm, a pypi and an oci package of one server.
fn packaged() -> ServerJson {
    server(json!({
        "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
        "name": "io.github.acme/weather",
        "description": "Weather forecasts",
        "version": "1.2.0",
        "packages": [
            {
                "registryType": "npm",
                "registryBaseUrl": "https://registry.npmjs.org",
                "identifier": "@acme/weather-mcp",
                "version": "1.2.0",
                "runtimeHint": "npx",
                "transport": {"type": "stdio"},
                "packageArguments": [
                    {"type": "positional", "valueHint": "region", "isRequired": true, "description": "Region code"},
                    {"type": "named", "name": "--units", "isRequired": false, "default": "metric", "choices": ["metric", "imperial"]}
                ],
                "environmentVariables": [
                    {"name": "WEATHER_API_KEY", "description": "Your API key", "isRequired": true, "isSecret": true},
                    {"name": "LOG_LEVEL", "isRequired": false, "default": "info"}
                ]
            },
            {
                "registryType": "pypi",
                "identifier": "acme-weather-mcp",
                "version": "1.2.0",
                "runtimeHint": "uvx",
                "transport": {"type": "stdio"},
                "environmentVariables": [
                    {"name": "WEATHER_API_KEY", "isRequired": true, "isSecret": true}
                ]
            },
            {
                "registryType": "oci",
                "identifier": "docker.io/acme/weather-mcp",
                "version": "1.2.0",
                "runtimeHint": "docker",
                "transport": {"type": "stdio"},
                "runtimeArguments": [{"type": "named", "name": "--network", "value": "host"}],
                "environmentVariables": [
                    {"name": "WEATHER_API_KEY", "isRequired": true, "isSecret": true}
                ]
            },
            {
                "registryType": "nuget",
                "identifier": "Acme.Weather",
                "version": "1.2.0",
                "transport": {"type": "stdio"}
            }
        ]
    }))
}

#[test]
fn an_npm_package_is_npx_with_its_version_and_arguments() {
    let server = packaged();
    let given = values(&[("region", "eu"), ("--units", "imperial")]);
    let installed = install(&server, Choice::Package(0), "weather".into(), &given).unwrap();
    let candidate = &installed.candidate;
    assert_eq!(candidate.transport, TransportKind::Stdio);
    assert_eq!(candidate.command.as_deref(), Some("npx"));
    assert_eq!(
        candidate.args,
        ["-y", "@acme/weather-mcp@1.2.0", "eu", "--units", "imperial"]
    );
    // The secret nobody sent is each person's own; the optional one is left out.
    assert_eq!(
        candidate
            .secrets
            .env
            .get("WEATHER_API_KEY")
            .map(String::as_str),
        Some("{{user.WEATHER_API_KEY}}")
    );
    assert!(!candidate.secrets.env.contains_key("LOG_LEVEL"));
    assert_eq!(installed.user_fields, ["WEATHER_API_KEY"]);
    let field = &candidate.auth.user_fields["WEATHER_API_KEY"];
    assert_eq!(field.title, "Your API key");
    assert!(field.secret);
}

#[test]
fn a_pypi_package_is_uvx_and_a_sent_secret_is_stored_as_the_servers() {
    let server = packaged();
    let given = values(&[("WEATHER_API_KEY", "k-123")]);
    let installed = install(&server, Choice::Package(1), "weather".into(), &given).unwrap();
    assert_eq!(installed.candidate.command.as_deref(), Some("uvx"));
    assert_eq!(installed.candidate.args, ["acme-weather-mcp==1.2.0"]);
    assert_eq!(installed.candidate.secrets.env["WEATHER_API_KEY"], "k-123");
    assert_eq!(installed.secrets, ["env.WEATHER_API_KEY"]);
    assert!(installed.user_fields.is_empty());
}

#[test]
fn an_oci_package_is_docker_run_with_its_env_passed_in() {
    let server = packaged();
    let given = values(&[("WEATHER_API_KEY", "k-123")]);
    let installed = install(&server, Choice::Package(2), "weather".into(), &given).unwrap();
    assert_eq!(installed.candidate.command.as_deref(), Some("docker"));
    assert_eq!(
        installed.candidate.args,
        [
            "run",
            "-i",
            "--rm",
            "--network",
            "host",
            "-e",
            "WEATHER_API_KEY",
            "docker.io/acme/weather-mcp:1.2.0"
        ]
    );
}

#[test]
fn an_image_with_its_tag_keeps_it() {
    let mut server = packaged();
    server.packages[2].identifier = "ghcr.io/acme/weather-mcp:2.0.0".into();
    let given = values(&[("WEATHER_API_KEY", "k")]);
    let installed = install(&server, Choice::Package(2), "w".into(), &given).unwrap();
    assert_eq!(
        installed.candidate.args.last().unwrap(),
        "ghcr.io/acme/weather-mcp:2.0.0"
    );
}

#[test]
fn mistakes_are_named() {
    let server = packaged();
    let missing = install(&server, Choice::Package(0), "w".into(), &values(&[])).unwrap_err();
    assert!(
        missing
            .to_string()
            .contains("argument region is required (Region code)"),
        "{missing}"
    );
    let unknown = install(
        &server,
        Choice::Package(1),
        "w".into(),
        &values(&[("WEATHER_API_KEY", "k"), ("TYPO", "x")]),
    )
    .unwrap_err();
    assert!(unknown.to_string().contains("values: TYPO"), "{unknown}");
    let choice = install(
        &server,
        Choice::Package(0),
        "w".into(),
        &values(&[("region", "eu"), ("--units", "kelvin")]),
    )
    .unwrap_err();
    assert!(choice.to_string().contains("metric, imperial"), "{choice}");
    let nuget = install(&server, Choice::Package(3), "w".into(), &values(&[])).unwrap_err();
    assert!(nuget.to_string().contains("'nuget'"), "{nuget}");
    assert!(matches!(
        choose(&server, None, None),
        Err(InstallError::Choice(_))
    ));
    assert!(matches!(
        choose(&server, Some(9), None),
        Err(InstallError::Choice(_))
    ));
    assert!(matches!(
        choose(&server, Some(0), Some(0)),
        Err(InstallError::Choice(_))
    ));
    assert_eq!(choose(&server, Some(2), None), Ok(Choice::Package(2)));
}

#[test]
fn a_remote_fills_its_url_variables_and_templated_headers() {
    let server = server(json!({
        "name": "com.example/tenant-api",
        "description": "Per-tenant API",
        "version": "0.3.0",
        "remotes": [{
            "type": "sse",
            "url": "https://{tenant}.example.com/sse",
            "variables": {"tenant": {"description": "Your tenant", "isRequired": true}},
            "headers": [{
                "name": "Authorization",
                "value": "Bearer {token}",
                "variables": {"token": {"isSecret": true, "isRequired": true, "description": "API token"}}
            }]
        }]
    }));
    assert_eq!(choose(&server, None, None), Ok(Choice::Remote(0)));
    let missing = install(&server, Choice::Remote(0), "t".into(), &values(&[])).unwrap_err();
    assert!(
        missing
            .to_string()
            .contains("url variable tenant is required (Your tenant)"),
        "{missing}"
    );
    let installed = install(
        &server,
        Choice::Remote(0),
        "t".into(),
        &values(&[("tenant", "acme")]),
    )
    .unwrap();
    assert_eq!(installed.candidate.transport, TransportKind::Sse);
    assert_eq!(
        installed.candidate.url.as_deref(),
        Some("https://acme.example.com/sse")
    );
    assert_eq!(
        installed.candidate.secrets.headers["Authorization"],
        "Bearer {{user.TOKEN}}"
    );
    assert_eq!(installed.user_fields, ["TOKEN"]);
}

#[test]
fn a_package_serving_http_locally_is_refused() {
    let mut server = packaged();
    server.packages[0].transport.kind = "streamable-http".into();
    let refused = install(&server, Choice::Package(0), "w".into(), &values(&[])).unwrap_err();
    assert!(matches!(refused, InstallError::Unsupported(_)), "{refused}");
}
