//! Single sign-on with a provider that cannot be reached: `GET /auth/oidc/login` is a browser
//! navigation, so it sends the browser back to the sign-in page with the reason in words (the
//! page shows `sso_error`), not a raw JSON 502.

use crate::support::{TestServer, test_config};
use reqwest::StatusCode;
use reqwest::header::LOCATION;
use switchboard_mcp_client::{UrlPolicy, UrlPolicyConfig};
use switchboard_server::oidc::OidcConfig;

#[tokio::test]
async fn an_unreachable_provider_sends_the_browser_to_the_sign_in_page_saying_why() {
    // A port nothing listens on: the discovery document cannot be read.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let issuer = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let config = test_config();
    let public_url = config.public_url.clone();
    let oidc: OidcConfig =
        toml::from_str(&format!("issuer = \"{issuer}\"\nclient_id = \"sb\"\n")).unwrap();
    let server = TestServer::start_with(
        config,
        |router| router,
        |state| {
            let policy = UrlPolicy::new(UrlPolicyConfig::default());
            let service =
                switchboard_server::oidc::service(oidc, &public_url, policy, state.store.clone())
                    .unwrap();
            state.with_oidc(service)
        },
    )
    .await;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let response = client
        .get(server.url("/auth/oidc/login"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let location = response.headers()[LOCATION].to_str().unwrap().to_owned();
    let (page, reason) = location.split_once("#/signin?sso_error=").expect(&location);
    assert_eq!(page, public_url.join("/"), "the UI's own sign-in page");
    let reason: String = url::form_urlencoded::parse(format!("r={reason}").as_bytes())
        .map(|(_, value)| value.into_owned())
        .collect();
    assert!(
        reason.contains("identity provider could not be reached"),
        "{reason}"
    );
}
