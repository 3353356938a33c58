/**
 * `plens persona import`: reads either input format (streamed and validated, read.ts),
 * groups a raw list by author as Raw_Data_Process.py does, assigns the original's IDs and
 * writes three Parquet tables through DuckDB: users, posts, comments (with parent ids,
 * depth, pre-order position, normalised timestamps and deletion flags). Nothing is
 * dropped from the tables; the summary counts what the prompt makers will leave out and
 * why. The tables replace their files only when everything is written; nothing else in the
 * output folder is touched.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBDataChunk, DuckDBTypeId, type DuckDBAppender, type DuckDBType } from '@duckdb/node-api';
import { replaceFilesAtomic } from '../../core/atomic.js';
import { Database } from '../../db/database.js';
import {
  cleanText,
  flattenCorpus,
  groupByAuthor,
  isDeletedLoose,
  isDeletedStrict,
  isNumericScore,
  scoreValue,
  type RawPost,
  type UserPosts,
  skippedCommentEntries,
} from './corpus.js';
import { streamPosts, type InputFormat } from './read.js';

export interface PersonaImportOptions {
  from: string;
  out: string;
  dryRun?: boolean;
}

export interface PersonaImportSummary {
  dry_run: boolean;
  source: string;
  format: InputFormat;
  out_dir: string;
  users: number;
  posts: number;
  comments: number;
  tables: Record<string, { file: string; rows: number }>;
  /** Messages kept in the tables but left out of candidate lists by the prompt makers, by reason. */
  excluded: Record<string, number>;
  elapsed_ms: number;
}

export const PERSONA_TABLES = {
  users: 'user_number INTEGER, user VARCHAR, posts INTEGER',
  posts:
    'post_id VARCHAR, user_number INTEGER, post_number INTEGER, global_index INTEGER, user VARCHAR, author VARCHAR, title VARCHAR, url VARCHAR, content VARCHAR, subreddit VARCHAR, score DOUBLE, timestamp VARCHAR, timestamp_raw VARCHAR, time_us BIGINT, comments INTEGER',
  comments:
    'comment_id VARCHAR, post_id VARCHAR, parent_id VARCHAR, top_level_id VARCHAR, depth INTEGER, preorder INTEGER, author VARCHAR, is_post_author BOOLEAN, body VARCHAR, body_clean VARCHAR, score DOUBLE, score_numeric BOOLEAN, timestamp VARCHAR, timestamp_raw VARCHAR, time_us BIGINT, deleted BOOLEAN, deleted_exact BOOLEAN',
} as const;

type Cell = string | number | boolean | bigint | null;

/**
 * Appends rows a chunk (2,048 rows) at a time: one columnar write per column instead of one
 * native call per cell, which is most of the import's time on a release-sized corpus.
 */
class ChunkAppender {
  private readonly types: DuckDBType[];
  private readonly bigint: boolean[];
  private rows: Cell[][] = [];

  constructor(private readonly appender: DuckDBAppender) {
    this.types = Array.from({ length: appender.columnCount }, (_, i) => appender.columnType(i));
    this.bigint = this.types.map((t) => t.typeId === DuckDBTypeId.BIGINT);
  }

  push(cells: Cell[]): void {
    this.rows.push(cells);
    if (this.rows.length === 2048) this.flush();
  }

  private flush(): void {
    if (this.rows.length === 0) return;
    const chunk = DuckDBDataChunk.create(this.types, this.rows.length);
    for (let c = 0; c < this.types.length; c++) {
      const big = this.bigint[c];
      chunk.setColumnValues(
        c,
        this.rows.map((row) => (big && row[c] !== null ? BigInt(row[c] as number) : row[c]!)),
      );
    }
    this.appender.appendDataChunk(chunk);
    this.rows = [];
  }

  close(): void {
    this.flush();
    this.appender.closeSync();
  }
}

const text = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));

export async function readPersonaUsers(file: string): Promise<{ users: UserPosts[]; format: InputFormat }> {
  const grouped = new Map<string, RawPost[]>();
  const flat: RawPost[] = [];
  const iterator = streamPosts(file);
  let format: InputFormat = 'raw';
  for (;;) {
    const next = await iterator.next();
    if (next.done) {
      format = next.value;
      break;
    }
    const { user, post } = next.value;
    if (user === undefined) flat.push(post);
    else {
      let list = grouped.get(user);
      if (list === undefined) grouped.set(user, (list = []));
      list.push(post);
    }
  }
  const users = format === 'raw' ? groupByAuthor(flat) : [...grouped].map(([user, posts]) => ({ user, posts }));
  return { users, format };
}

export async function runPersonaImport(options: PersonaImportOptions): Promise<PersonaImportSummary> {
  const started = performance.now();
  const { users, format } = await readPersonaUsers(options.from);
  const posts = flattenCorpus(users);
  const excluded: Record<string, number> = {
    'comment timestamp missing or unparseable (dropped from every candidate list)': 0,
    'comment body deleted/removed/empty (3.1/3.2 test)': 0,
    'comment body exactly [deleted]/[removed] (3.3 test)': 0,
    'comment score not numeric (not a 3.1/3.2 candidate)': 0,
    'comment author missing': 0,
    'post timestamp missing or unparseable': 0,
    'post score not numeric (a string, null, ...: shown as the original shows it)': 0,
    'comment-list entries that are not objects (skipped, as the original skips them)': 0,
    'comments or replies that are not a list (read as none, as the original reads them)': 0,
  };
  let commentCount = 0;
  for (const post of posts) {
    if (post.time === null) excluded['post timestamp missing or unparseable']!++;
    if (!isNumericScore(post.raw.score)) excluded['post score not numeric (a string, null, ...: shown as the original shows it)']!++;
    const skipped = skippedCommentEntries(post.raw);
    excluded['comment-list entries that are not objects (skipped, as the original skips them)']! += skipped.entries;
    excluded['comments or replies that are not a list (read as none, as the original reads them)']! += skipped.lists;
    for (const node of post.comments) {
      commentCount++;
      if (node.time === null) excluded['comment timestamp missing or unparseable (dropped from every candidate list)']!++;
      if (isDeletedLoose(node.body)) excluded['comment body deleted/removed/empty (3.1/3.2 test)']!++;
      if (isDeletedStrict(node.body)) excluded['comment body exactly [deleted]/[removed] (3.3 test)']!++;
      if (!isNumericScore(node.score)) excluded['comment score not numeric (not a 3.1/3.2 candidate)']!++;
      if (node.author === null) excluded['comment author missing']!++;
    }
  }
  const summary: PersonaImportSummary = {
    dry_run: options.dryRun === true,
    source: options.from,
    format,
    out_dir: options.out,
    users: users.length,
    posts: posts.length,
    comments: commentCount,
    tables: {},
    excluded,
    elapsed_ms: 0,
  };
  if (options.dryRun) {
    summary.elapsed_ms = Math.round(performance.now() - started);
    return summary;
  }
  const db = await Database.open(':memory:', { threads: 2 });
  try {
    for (const [name, columns] of Object.entries(PERSONA_TABLES)) await db.run(`CREATE TABLE ${name} (${columns})`);
    const usersAppender = new ChunkAppender(await db.appender('users'));
    users.forEach((user, i) => usersAppender.push([i + 1, user.user, user.posts.length]));
    usersAppender.close();
    const postsAppender = new ChunkAppender(await db.appender('posts'));
    const commentsAppender = new ChunkAppender(await db.appender('comments'));
    for (const post of posts) {
      const raw = post.raw;
      postsAppender.push([
        post.id,
        post.userNumber,
        post.postNumber,
        post.globalIndex,
        post.user,
        post.author,
        text(raw.title),
        text(raw.url),
        text(raw.content),
        text(raw.__sub__),
        isNumericScore(raw.score) ? scoreValue(raw.score) : null,
        post.timestamp,
        text(raw.timestamp),
        post.time,
        post.comments.length,
      ]);
      for (const node of post.comments) {
        commentsAppender.push([
          node.id,
          post.id,
          node.parentId,
          node.topLevelId,
          node.depth,
          node.order,
          node.author,
          node.author !== null && node.author === post.author,
          text(node.body),
          cleanText(node.body),
          isNumericScore(node.score) ? scoreValue(node.score) : null,
          isNumericScore(node.score),
          node.timestamp,
          text(node.timestampRaw),
          node.time,
          isDeletedLoose(node.body),
          isDeletedStrict(node.body),
        ]);
      }
    }
    postsAppender.close();
    commentsAppender.close();
    // The tables and the summary replace their own files only: the folder (by default
    // <workspace>/persona) also holds the selections and the paid predictions made from them.
    await replaceFilesAtomic(
      options.out,
      async (staging) => {
        for (const name of Object.keys(PERSONA_TABLES)) {
          const file = join(staging, `${name}.parquet`);
          await db.run(`COPY ${name} TO $1 (FORMAT parquet, COMPRESSION zstd)`, undefined, [file]);
          const [row] = await db.all<{ n: number }>(`SELECT count(*)::INTEGER AS n FROM ${name}`);
          summary.tables[name] = { file: join(options.out, `${name}.parquet`), rows: row!.n };
        }
        summary.elapsed_ms = Math.round(performance.now() - started);
        await writeFile(join(staging, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
      },
      'summary.json',
    );
  } finally {
    db.close();
  }
  return summary;
}
