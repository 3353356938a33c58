/**
 * Finds a post by any of the ids the original prompt makers give it: `u{i}p{j}` (the
 * per-user makers), `task_u{i}p{j}` and `internal_p{n}` (3.1 NP-Conv, n 1-based over all
 * posts), `orig_idx{n}` and `ctx_idx{n}` (3.3 NP-Conv, n 0-based). The post comes back
 * flattened under that id, so its comments carry the ids the prompt shows.
 */
import { flatCorpusOf, flattenPost, renameId, renamePost, type CommentNode, type FlatPost, type UserPosts } from './corpus.js';

export class PromptCorpus {
  readonly posts: FlatPost[];
  /** The posts under their `u{i}p{j}` ids (what prompts.ts and reply-prompts.ts look up). */
  readonly index: Map<string, FlatPost>;
  private readonly renamed = new Map<string, FlatPost>();

  constructor(users: readonly UserPosts[]) {
    this.posts = flatCorpusOf(users);
    this.index = new Map(this.posts.map((post) => [post.id, post]));
  }

  /**
   * A node of the post `postId` by its id under that post's prefix, looked up in the
   * `u{i}p{j}` copy (no renamed copy is made: for prompts that print no comment ids).
   */
  node(postId: string, nodeId: string): { post: FlatPost; node: CommentNode } {
    const m = /^(?:task_(u\d+p\d+)|internal_p(\d+))$/.exec(postId);
    const base = m ? (m[1] !== undefined ? this.index.get(m[1]) : this.posts[Number(m[2]) - 1]) : undefined;
    if (!base) {
      const post = this.get(postId);
      return { post, node: post.byId.get(nodeId)! };
    }
    return { post: base, node: base.byId.get(renameId(nodeId, postId, base.id))! };
  }

  get(id: string): FlatPost {
    const direct = this.index.get(id) ?? this.renamed.get(id);
    if (direct) return direct;
    let base: FlatPost | undefined;
    let createdUtcFallback = false;
    let m: RegExpExecArray | null;
    if ((m = /^task_(u\d+p\d+)$/.exec(id))) base = this.index.get(m[1]!);
    else if ((m = /^internal_p(\d+)$/.exec(id))) base = this.posts[Number(m[1]) - 1];
    else if ((m = /^(?:orig|ctx)_idx(\d+)$/.exec(id))) {
      base = this.posts[Number(m[1])];
      // Only 3.3_RandPrompt falls back to created_utc (spec §4.2b.5).
      createdUtcFallback = true;
    }
    if (!base) throw new RangeError(`no post with id ${id}`);
    let post: FlatPost;
    if (createdUtcFallback && base.createdUtcOnly) {
      const { comments, byId } = flattenPost(base.raw, id, true);
      post = { ...base, id, comments, byId };
    } else {
      post = renamePost(base, id);
    }
    // A few recent posts only: a prompt looks its posts up a few times, one after another.
    if (this.renamed.size >= 16) this.renamed.delete(this.renamed.keys().next().value!);
    this.renamed.set(id, post);
    return post;
  }
}
