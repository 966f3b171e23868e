//! The quickstart path: create a stat-cards pin with the bootstrap-style `*` key, read it back.

use serde_json::json;

use crate::{both_stores, helpers::*};

both_stores! {
    async fn create_then_read(app) {
        let created = app.create_pin(&stat_cards("Sales")).await;
        let id = created["pin_id"].as_str().unwrap().to_owned();
        assert!(id.starts_with("p-"));
        assert_eq!(created["id"], json!(id));
        let read = app.get(&format!("/v1/pins/{id}")).await.expect(200);
        assert_eq!(read.header("etag"), Some("\"1\""));
        assert_eq!(read.data()["metadata"]["title"], json!("Sales"));
        assert_eq!(read.data()["pin_config"], stat_cards("x")["pin_config"]);
    }
}
