//! The push floor for the live-events benchmark: what the viewers' side of this machine can
//! see at best. It stores nothing and checks nothing; `POST /v1/pins` builds the event frame
//! Corkboard would send for a `json` pin (the same fields and size, the posted `pin_config`
//! inside) and writes it, as one chunk, on every open `GET /v1/events` socket in one tight
//! loop on one thread, before answering. Push latency measured against it is the probe's and
//! the kernel's part alone. `push_floor 127.0.0.1:18091`

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::{TcpListener, TcpStream},
    sync::{Arc, Mutex},
    thread,
};

type Viewers = Arc<Mutex<Vec<TcpStream>>>;

fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:18091".into());
    let listener = TcpListener::bind(&addr)?;
    let viewers: Viewers = Arc::default();
    for stream in listener.incoming() {
        let stream = stream?;
        stream.set_nodelay(true)?;
        let viewers = viewers.clone();
        let base = format!("http://{addr}");
        thread::spawn(move || serve(stream, &viewers, &base));
    }
    Ok(())
}

/// One connection: an event stream joins the viewers; posts are answered until it closes.
fn serve(stream: TcpStream, viewers: &Viewers, base: &str) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    let mut seq = 0u64;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            reader.read_line(&mut header)?;
            if header.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
        }
        if line.starts_with("GET ") {
            writer.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
                  transfer-encoding: chunked\r\n\r\n",
            )?;
            viewers.lock().expect("viewers").push(writer);
            return Ok(());
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        let posted: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        seq += 1;
        let frame = frame(seq, &posted["pin_config"], base);
        let chunk = [
            format!("{:x}\r\n", frame.len()).as_bytes(),
            frame.as_bytes(),
            b"\r\n",
        ]
        .concat();
        viewers
            .lock()
            .expect("viewers")
            .retain_mut(|viewer| viewer.write_all(&chunk).is_ok());
        let answer =
            r#"{"success":true,"data":{"pin_id":"p-AaIOfmz8RXz2vl92QBozxMFb","version":1}}"#;
        write!(
            writer,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{answer}",
            answer.len()
        )?;
    }
}

/// The frame of a `pin.created` event as Corkboard formats it.
fn frame(seq: u64, pin_config: &serde_json::Value, base: &str) -> String {
    let id = "p-AaIOfmz8RXz2vl92QBozxMFb";
    let at = "2026-11-24T16:58:16.188Z";
    let record = serde_json::json!({
        "id": id, "pin_type": "json", "pin_config": pin_config, "pin_layout": "1x1",
        "is_public": false, "metadata": {"title": null, "tags": [], "provenance": null},
        "version": 1, "shareable_url": format!("{base}/share/{id}"),
        "created_at": at, "updated_at": at,
    });
    let data = serde_json::json!({"type": "pin.created", "id": id, "version": 1, "at": at, "data": record});
    format!("id: {seq}\nevent: pin.created\ndata: {data}\n\n")
}
